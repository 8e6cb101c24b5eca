/* analyzer/render_html_asset.c — the HTML report's style and script (render_html.h), kept as
 * plain files (analyzer/assets/report.css, report.js) and built into the binary here by the
 * assembler's .incbin, each followed by a NUL. The paths are relative to the repository root,
 * where make runs the compiler (analyzer/module.mk makes this object depend on both files). */

__asm__(".section .rodata\n"
        ".global hl_html_css\n"
        ".type hl_html_css, @object\n"
        "hl_html_css:\n"
        ".incbin \"analyzer/assets/report.css\"\n"
        ".byte 0\n"
        ".size hl_html_css, . - hl_html_css\n"
        ".global hl_html_js\n"
        ".type hl_html_js, @object\n"
        "hl_html_js:\n"
        ".incbin \"analyzer/assets/report.js\"\n"
        ".byte 0\n"
        ".size hl_html_js, . - hl_html_js\n"
        ".previous\n");
