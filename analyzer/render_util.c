/* analyzer/render_util.c — orderings shared by the renderers. */
#include <stdlib.h>

#include "render.h"

static const hl_report_t *sort_r;

static int cmp_count(const void *a, const void *b)
{
    const hl_site_t *x = &sort_r->sites[*(const size_t *)a],
                    *y = &sort_r->sites[*(const size_t *)b];
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_live(const void *a, const void *b)
{
    const hl_site_t *x = &sort_r->sites[*(const size_t *)a],
                    *y = &sort_r->sites[*(const size_t *)b];
    if (x->live_bytes != y->live_bytes) return x->live_bytes < y->live_bytes ? 1 : -1;
    if (x->live_blocks != y->live_blocks) return x->live_blocks < y->live_blocks ? 1 : -1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

size_t *hl_sites_by_count(const hl_report_t *r)
{
    size_t *ix = malloc((r->nsites + 1) * sizeof *ix);
    if (!ix) abort();
    for (size_t i = 0; i < r->nsites; i++)
        ix[i] = i;
    sort_r = r;
    qsort(ix, r->nsites, sizeof *ix, cmp_count);
    return ix;
}

size_t hl_leak_sites(const hl_report_t *r, size_t **idx)
{
    size_t *ix = malloc((r->nsites + 1) * sizeof *ix), n = 0;
    if (!ix) abort();
    for (size_t i = 0; i < r->nsites; i++)
        if (r->sites[i].live_blocks && !r->sites[i].supp) ix[n++] = i;
    sort_r = r;
    qsort(ix, n, sizeof *ix, cmp_live);
    *idx = ix;
    return n;
}

const char *const hl_kregion_names[HL_KREGIONS] = {"other", "slab_segment", "tlsf_pool", "large",
                                                   "arena"};

/* s with the HTML metacharacters < > & " ' as entities (text and attribute values). */
void hl_html_esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}
