/* analyzer/render_html_chart.c — line and bar charts as inline SVG (render_html.h). The SVG
 * has a viewBox and scales down with the page (CSS: width 100 %, at most its own width). */
#include <math.h>
#include <stdio.h>

#include "render_html.h"

#define CW HL_HTML_CW
#define CH 240 /* line chart height */
#define ML 70
#define MR 20
#define MT 16
#define MB 36

const char *hl_html_human(double v, char *buf, size_t n)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (fabs(v) >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, n, i ? "%.1f %s" : "%.0f %s", v, u[i]);
    return buf;
}

static const char *fmt_y(double v, int percent, char *buf, size_t n)
{
    if (percent)
        snprintf(buf, n, "%.1f%%", v * 100);
    else
        hl_html_human(v, buf, n);
    return buf;
}

void hl_html_line_chart(FILE *f, const char *name, const char *title, const hl_report_t *r,
                        int nseries, double (*get)(const hl_report_t *, int, int),
                        const char **labels, const char **colors, int percent)
{
    double ymax = percent ? 1 : 0, xmax = 0;
    int points = 0;
    for (int i = 0; i < r->nsamples; i++) {
        if (r->samples[i].ts > xmax) xmax = (double)r->samples[i].ts;
        for (int s = 0; s < nseries; s++) {
            double v = get(r, i, s);
            if (v > ymax) ymax = v;
            points += v >= 0;
        }
    }
    if (percent) { /* fractions: zoom on the data, up to 100 % */
        double vmax = 0;
        for (int i = 0; i < r->nsamples; i++)
            for (int s = 0; s < nseries; s++)
                if (get(r, i, s) > vmax) vmax = get(r, i, s);
        ymax = vmax * 1.1 > 1 ? 1 : vmax * 1.1 < 0.05 ? 0.05 : vmax * 1.1;
    }
    if (ymax <= 0) ymax = 1;
    if (xmax <= 0) xmax = 1;
    fprintf(f,
            "<h3>%s</h3>\n<svg class=\"hl-chart\" data-chart=\"%s\" data-points=\"%d\" "
            "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n",
            title, name, points, CW, CH, CW, CH);
    int pw = CW - ML - MR, ph = CH - MT - MB;
    char buf[64];
    for (int t = 0; t <= 4; t++) {
        double y = MT + ph - ph * t / 4.0;
        fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", ML,
                ML + pw, y, y);
        fprintf(f, "<text class=\"ax\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML - 6,
                y + 4, fmt_y(ymax * t / 4, percent, buf, sizeof buf));
    }
    for (int t = 0; t <= 5; t++) {
        double x = ML + pw * t / 5.0;
        fprintf(f, "<text class=\"ax\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.3g s</text>\n",
                x, CH - MB + 18, xmax * t / 5 / 1e9);
    }
    for (int s = 0; s < nseries; s++) {
        int open = 0;
        for (int i = 0; i < r->nsamples; i++) {
            double v = get(r, i, s);
            if (v < 0) {
                if (open) fputs("\"/>\n", f);
                open = 0;
                continue;
            }
            if (!open)
                fprintf(f,
                        "<polyline class=\"hl-datum\" fill=\"none\" stroke=\"%s\" "
                        "stroke-width=\"2\" points=\"",
                        colors[s]);
            open = 1;
            fprintf(f, "%.1f,%.1f ", ML + pw * (double)r->samples[i].ts / xmax,
                    MT + ph - ph * v / ymax);
        }
        if (open) fputs("\"/>\n", f);
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                "<text class=\"lg\" x=\"%d\" y=\"%d\">%s</text>\n",
                ML + 10 + s * 170, CH - 12, colors[s], ML + 24 + s * 170, CH - 3, labels[s]);
    }
    fputs("</svg>\n", f);
}

void hl_html_bar_chart(FILE *f, const char *name, const char *title, int n, const double *v,
                       char labels[][24], const char *color, int w, int h)
{
    double vmax = 0;
    int bars = 0;
    for (int i = 0; i < n; i++) {
        if (v[i] > vmax) vmax = v[i];
        bars += v[i] > 0;
    }
    fprintf(f,
            "<svg class=\"hl-chart\" data-chart=\"%s\" data-points=\"%d\" viewBox=\"0 0 %d %d\" "
            "width=\"%d\" height=\"%d\"><text class=\"tt\" x=\"4\" y=\"13\">",
            name, bars, w, h, w, h);
    hl_html_esc(f, title);
    fputs("</text>\n", f);
    if (vmax <= 0) vmax = 1;
    int top = 20, bottom = 30, left = 6;
    double bw = (double)(w - 2 * left) / n;
    for (int i = 0; i < n; i++) {
        double bh = (h - top - bottom) * v[i] / vmax;
        if (v[i] > 0)
            fprintf(f,
                    "<rect class=\"hl-datum\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"%.1f\" fill=\"%s\"><title>%s: %.0f</title></rect>\n",
                    left + i * bw + 1, h - bottom - bh, bw - 2, bh, color, labels[i], v[i]);
        if (i % ((n + 7) / 8) == 0)
            fprintf(f,
                    "<text class=\"ax\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
                    "font-size=\"9\">%s</text>\n",
                    left + i * bw + bw / 2, h - bottom + 14, labels[i]);
    }
    fputs("</svg>\n", f);
}
