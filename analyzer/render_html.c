/* analyzer/render_html.c — placeholder until the HTML renderer lands. */
#include <errno.h>

#include "render.h"

int hl_render_html(const char *out_path, hl_report_t *r, const hl_render_opts_t *o)
{
    (void)out_path;
    (void)r;
    (void)o;
    errno = ENOSYS;
    return -1;
}
