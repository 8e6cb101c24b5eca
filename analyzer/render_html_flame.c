/* analyzer/render_html_flame.c — the flame graphs' data and markup (render_html.h).
 *
 * The page's script draws the graphs (icicles: callers on top) from one JSON document, so a
 * reader can switch the metric, zoom into a frame and search by name without a reload:
 *
 *   {"metrics": ["bytes", "count", "leaked", "temporaries", "cycles"],
 *    "frames":  [[function, "file:line" or "", module or ""], ...],
 *    "stacks":  [[[frame index, outermost first, ...], bytes, count, leaked, temporaries,
 *                 cycles], ...],
 *    "sites": N (allocation sites in the report), "shown": n (of them in "stacks")}
 *
 * A stack runs from its outermost frame down to the first frame outside the allocator (as
 * flame.c does). bytes / count: requested bytes and allocations of the site; leaked: bytes
 * live at the end (suppressed sites: 0); temporaries: allocations freed before the thread
 * allocated again; cycles: allocator cycles of the operations called from this stack (site
 * cycles of every path, frees included: their stacks are free sites). Frames are shared:
 * one entry per distinct (function, file:line, module).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "jsonw.h"
#include "render_html.h"
#include "symbols.h"

#define SITES_BY_METRIC 1500 /* sites kept per metric (bytes, count, leaked, temporaries) */

typedef struct flame_stack_s {
    int64_t stack;
    uint64_t m[5];
} flame_stack_t;

typedef struct frame_tab_s {
    hl_hmap_t index; /* hash of the frame's three strings -> 1 + position in key[] */
    char **key;      /* function \x1f file:line \x1f module */
    size_t n, cap;
} frame_tab_t;

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The index of a frame in the table, added when new. */
static size_t frame_index(frame_tab_t *t, const char *key)
{
    for (uint64_t h = fnv(key);; h++) {
        int fresh;
        uint64_t *v = hl_hmap_put(&t->index, h, 0, &fresh);
        if (fresh) {
            *v = t->n + 1;
            *HL_VEC_PUSH(t->key, t->n, t->cap) = strdup(key);
            return t->n - 1;
        }
        if (!strcmp(t->key[*v - 1], key)) return (size_t)(*v - 1);
    }
}

/* A JSON string (valid UTF-8, hl_json_escape) of len bytes of s, with '<' as \u003c: the
 * document sits inside a <script> element, which "</script>" in a name would end. */
static void json_field(FILE *f, const char *s, size_t len)
{
    char *c = strndup(s, len), *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    if (!c || !m) abort();
    hl_json_escape(m, c);
    fclose(m);
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '<')
            fputs("\\u003c", f);
        else
            fputc(buf[i], f);
    free(buf);
    free(c);
}

static const hl_report_t *sort_r;
static int sort_m;

static uint64_t site_metric(const hl_site_t *s, int m)
{
    switch (m) {
    case 0:
        return s->bytes;
    case 1:
        return s->count;
    case 2:
        return s->supp ? 0 : s->live_bytes;
    default:
        return s->temporary;
    }
}

static int cmp_metric(const void *a, const void *b)
{
    uint64_t x = site_metric(&sort_r->sites[*(const size_t *)a], sort_m),
             y = site_metric(&sort_r->sites[*(const size_t *)b], sort_m);
    if (x != y) return x < y ? 1 : -1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* The stacks to draw: the top SITES_BY_METRIC sites of each metric, then every stack with
 * site cycles. */
static size_t pick_stacks(const hl_report_t *r, flame_stack_t **out, size_t *shown)
{
    size_t n = 0, cap = 0;
    flame_stack_t *st = NULL;
    hl_hmap_t by_stack = {0}; /* stack id -> 1 + position in st */
    size_t *ix = malloc((r->nsites + 1) * sizeof *ix);
    char *pick = calloc(r->nsites + 1, 1);
    if (!ix || !pick) abort();
    for (int m = 0; m < 4; m++) {
        for (size_t i = 0; i < r->nsites; i++)
            ix[i] = i;
        sort_r = r;
        sort_m = m;
        qsort(ix, r->nsites, sizeof *ix, cmp_metric);
        for (size_t i = 0; i < r->nsites && i < SITES_BY_METRIC; i++)
            if (site_metric(&r->sites[ix[i]], m)) pick[ix[i]] = 1;
    }
    *shown = 0;
    for (size_t i = 0; i < r->nsites; i++) {
        if (!pick[i]) continue;
        const hl_site_t *s = &r->sites[i];
        int fresh;
        uint64_t *v = hl_hmap_put(&by_stack, (uint64_t)s->stack, 0, &fresh);
        if (fresh) {
            *HL_VEC_PUSH(st, n, cap) = (flame_stack_t){.stack = s->stack};
            *v = n;
        }
        for (int m = 0; m < 4; m++)
            st[*v - 1].m[m] += site_metric(s, m);
        ++*shown;
    }
    for (size_t i = 0; i < r->nsite_cycles; i++) {
        const hl_site_cycles_t *c = &r->site_cycles[i];
        if (!c->cycles) continue;
        int fresh;
        uint64_t *v = hl_hmap_put(&by_stack, (uint64_t)c->stack, 0, &fresh);
        if (fresh) {
            *HL_VEC_PUSH(st, n, cap) = (flame_stack_t){.stack = c->stack};
            *v = n;
        }
        st[*v - 1].m[4] += c->cycles;
    }
    hl_hmap_free(&by_stack);
    free(ix);
    free(pick);
    *out = st;
    return n;
}

void hl_html_flame_data(FILE *f, const hl_report_t *r)
{
    flame_stack_t *st;
    size_t shown, n = pick_stacks(r, &st, &shown);
    frame_tab_t tab = {0};
    size_t **path = calloc(n + 1, sizeof *path), *plen = calloc(n + 1, sizeof *plen);
    if (!path || !plen) abort();
    for (size_t i = 0; i < n; i++) {
        hl_frames_t fr = {0};
        if (st[i].stack >= 0) hl_frames_load(r->db, st[i].stack, &fr);
        char key[1400];
        if (!fr.n) {
            snprintf(key, sizeof key, "%s\x1f\x1f",
                     st[i].stack < 0 ? "(no stack)" : "(stack without frames)");
            path[i] = malloc(sizeof **path);
            if (!path[i]) abort();
            path[i][0] = frame_index(&tab, key);
            plen[i] = 1;
            hl_frames_free(&fr);
            continue;
        }
        const char *site = hl_frames_site(&fr);
        size_t inner = 0;
        while (inner + 1 < fr.n && fr.frame[inner] != site)
            inner++;
        plen[i] = fr.n - inner;
        path[i] = malloc(plen[i] * sizeof **path);
        if (!path[i]) abort();
        for (size_t k = 0; k < plen[i]; k++) {
            const hl_frame_t *x = &fr.loc[fr.n - 1 - k];
            const char *mod = x->module ? x->module : "";
            const char *base = strrchr(mod, '/');
            char fl[340] = "";
            if (x->file) snprintf(fl, sizeof fl, "%s:%d", x->file, x->line);
            snprintf(key, sizeof key, "%.500s\x1f%s\x1f%.500s", fr.func[fr.n - 1 - k], fl,
                     base ? base + 1 : mod);
            path[i][k] = frame_index(&tab, key);
        }
        hl_frames_free(&fr);
    }

    fputs("<script type=\"application/json\" id=\"hl-flame-data\">{\"metrics\":[\"bytes\","
          "\"count\",\"leaked\",\"temporaries\",\"cycles\"],\"frames\":[",
          f);
    for (size_t i = 0; i < tab.n; i++) {
        const char *k = tab.key[i], *s1 = strchr(k, '\x1f'), *s2 = strchr(s1 + 1, '\x1f');
        fputs(i ? ",[" : "[", f);
        json_field(f, k, (size_t)(s1 - k));
        fputc(',', f);
        json_field(f, s1 + 1, (size_t)(s2 - s1 - 1));
        fputc(',', f);
        json_field(f, s2 + 1, strlen(s2 + 1));
        fputc(']', f);
    }
    fputs("],\"stacks\":[", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",[[" : "[[", f);
        for (size_t k = 0; k < plen[i]; k++)
            fprintf(f, "%s%zu", k ? "," : "", path[i][k]);
        fputc(']', f);
        for (int m = 0; m < 5; m++)
            fprintf(f, ",%" PRIu64, st[i].m[m]);
        fputc(']', f);
        free(path[i]);
    }
    fprintf(f, "],\"sites\":%zu,\"shown\":%zu}</script>\n", r->nsites, shown);
    for (size_t i = 0; i < tab.n; i++)
        free(tab.key[i]);
    free(tab.key);
    hl_hmap_free(&tab.index);
    free(path);
    free(plen);
    free(st);
}

void hl_html_flame_widget(FILE *f, const char *name, const char *title, const char *metric)
{
    static const char *const metrics[] = {"bytes", "count", "leaked", "temporaries", "cycles"};
    static const char *const tips[] = {
        "requested bytes allocated", "allocations", "bytes live at the end (leaked)",
        "allocations freed before their thread allocated again", "allocator cycles"};
    fprintf(f, "<div class=\"flamebox\" data-flame=\"%s\" data-metric=\"%s\"><h3>%s</h3>\n", name,
            metric, title);
    fputs("<div class=\"fctl\"><span class=\"metrics\" role=\"group\" aria-label=\"metric\">", f);
    for (int m = 0; m < 5; m++)
        fprintf(f, "<button type=\"button\" data-m=\"%s\" title=\"%s\">%s</button>", metrics[m],
                tips[m], metrics[m]);
    fprintf(f,
            "</span><input type=\"search\" class=\"fsearch\" placeholder=\"search function\" "
            "aria-label=\"search function\"><button type=\"button\" class=\"freset\">reset "
            "zoom</button></div>\n<svg class=\"hl-chart flame\" data-chart=\"%s\" width=\"%d\" "
            "height=\"20\"></svg><p class=\"finfo\">Click a frame to zoom, click the root to "
            "zoom out; hover for its numbers and file:line.</p></div>\n",
            name, HL_HTML_CW);
}
