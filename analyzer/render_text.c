/* analyzer/render_text.c — the report as text for a terminal (the default output). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hl_schema.h"
#include "render.h"
#include "leakclass.h"
#include "safetext.h"
#include "suppress.h"
#include "symbols.h"

static void pct(FILE *f, double v)
{
    if (v < 0)
        fprintf(f, "%9s", "n/a");
    else
        fprintf(f, "%8.2f%%", v * 100);
}

static const char *size_label(const hl_size_stat_t *s, char *buf, size_t n)
{
    if (s->hi == UINT64_MAX)
        snprintf(buf, n, ">%" PRIu64, s->lo - 1);
    else
        snprintf(buf, n, "%" PRIu64 "-%" PRIu64, s->lo, s->hi);
    return buf;
}

static void print_stack(FILE *f, sqlite3 *db, int64_t stack, const char *indent)
{
    hl_frames_t fr;
    if (stack < 0 || hl_frames_load(db, stack, &fr) < 0 || fr.n == 0) {
        fprintf(f, "%s(no stack recorded)\n", indent);
        if (stack >= 0) hl_frames_free(&fr);
        return;
    }
    for (size_t i = 0; i < fr.n; i++)
        fprintf(f, "%s#%zu %s\n", indent, i, hl_safe(fr.frame[i]));
    hl_frames_free(&fr);
}

static void site_line(FILE *f, sqlite3 *db, int64_t stack)
{
    hl_frames_t fr;
    if (stack < 0 || hl_frames_load(db, stack, &fr) < 0 || fr.n == 0) {
        fprintf(f, "%s\n", stack < 0 ? "(no stack)" : "(stack without frames)");
        if (stack >= 0) hl_frames_free(&fr);
        return;
    }
    fprintf(f, "%s  [stack %" PRId64 "]\n", hl_safe(hl_frames_site(&fr)), stack);
    hl_frames_free(&fr);
}

static void paths_table(FILE *f, const hl_report_t *r, int op)
{
    fprintf(f, "\ncycles per path: %s (%" PRIu64 " operations)\n", hl_op_name((unsigned)op),
            r->op_count[op]);
    fprintf(f, "  %-18s %10s %7s %8s %8s %8s %8s %8s %9s %8s %9s\n", "path", "count", "share",
            "p01", "p25", "p50", "p75", "p99", "mean", "ns p50", "weighted");
    for (size_t i = 0; i < r->npaths; i++) {
        const hl_path_stat_t *p = &r->paths[i];
        if (p->op != op) continue;
        char name[32];
        if (p->path < (int)HL_PATH_COUNT)
            snprintf(name, sizeof name, "%s", hl_path_name((unsigned)p->path));
        else
            snprintf(name, sizeof name, "path#%d", p->path);
        fprintf(f, "  %-18s %10" PRIu64 " %6.2f%%", name, p->count, p->share * 100);
        if (p->timed) {
            fprintf(f, " %8.0f %8.0f %8.0f %8.0f %8.0f %9.1f", p->p01, p->p25, p->p50, p->p75,
                    p->p99, p->mean);
            if (p->ns_p50 >= 0)
                fprintf(f, " %8.1f", p->ns_p50);
            else
                fprintf(f, " %8s", "n/a");
            fprintf(f, " %9.1f\n", p->weighted);
        } else {
            fprintf(f, " %8s %8s %8s %8s %8s %9s %8s %9s\n", "-", "-", "-", "-", "-", "-", "-",
                    "-");
        }
    }
    fprintf(f, "  %-18s %10" PRIu64 " %7s %44s %9.1f %8s %9.1f\n", "all", r->op_count[op], "", "",
            r->op_mean[op], "", r->op_mean[op]);
}

static void path_label(char *buf, size_t n, int path)
{
    if (path < (int)HL_PATH_COUNT)
        snprintf(buf, n, "%s", hl_path_name((unsigned)path));
    else
        snprintf(buf, n, "path#%d", path);
}

/* Cycles per call site and path, then the slowest operations with their stacks
 * (docs/metrics.md, "Cycles per call site"): up to top sites per path, top operations. */
static void site_cycles_section(FILE *f, const hl_report_t *r, int top)
{
    if (!r->has_site_cycles) return;
    fprintf(f, "\ncycles per call site and path (up to %d sites per path, by cycles)\n", top);
    fprintf(f, "  %-8s %-16s %10s %10s %7s %8s %8s %9s %14s  site\n", "op", "path", "count",
            "timed", "share", "p50", "p99", "mean", "cycles");
    for (size_t i = 0; i < r->nsite_cycles;) {
        const hl_site_cycles_t *g = &r->site_cycles[i];
        size_t j = i, shown = 0;
        uint64_t rest_sites = 0;
        double rest_share = 0;
        for (; j < r->nsite_cycles && r->site_cycles[j].op == g->op &&
               r->site_cycles[j].path == g->path;
             j++) {
            const hl_site_cycles_t *s = &r->site_cycles[j];
            if (shown >= (size_t)top) {
                rest_sites++;
                rest_share += s->share > 0 ? s->share : 0;
                continue;
            }
            char name[32];
            path_label(name, sizeof name, s->path);
            fprintf(f, "  %-8s %-16s %10" PRIu64 " %10" PRIu64 " ", hl_op_name((unsigned)s->op),
                    name, s->count, s->timed);
            if (s->share >= 0)
                fprintf(f, "%6.2f%%", s->share * 100);
            else
                fprintf(f, "%7s", "-");
            if (s->timed)
                fprintf(f, " %8.0f %8.0f %9.1f %14" PRIu64 "  ", s->p50, s->p99, s->mean,
                        s->cycles);
            else
                fprintf(f, " %8s %8s %9s %14s  ", "-", "-", "-", "-");
            site_line(f, r->db, s->stack);
            shown++;
        }
        if (rest_sites)
            fprintf(f, "  %-8s %-16s ... %" PRIu64 " more sites: %.2f%% of the path's cycles\n", "",
                    "", rest_sites, rest_share * 100);
        i = j;
    }
    size_t n = r->nslowest < (size_t)top ? r->nslowest : (size_t)top;
    fprintf(f, "\nslowest operations (%zu of the %zu slowest kept)\n", n, r->nslowest);
    for (size_t i = 0; i < n; i++) {
        const hl_slow_op_t *o = &r->slowest[i];
        char name[32];
        path_label(name, sizeof name, o->path);
        fprintf(f, "  %zu. %s %s: %" PRId64 " cycles", i + 1, hl_op_name((unsigned)o->op), name,
                o->cycles);
        if (r->run.tsc_hz > 0)
            fprintf(f, " (%.0f ns)", (double)o->cycles * 1e9 / (double)r->run.tsc_hz);
        fprintf(
            f, ", %" PRIu64 " bytes, pid %" PRId64 " tid %" PRId64 " at %.6f s (seq %" PRId64 ")\n",
            o->size, o->pid, o->tid, (double)o->ts / 1e9, o->seq);
        print_stack(f, r->db, o->stack, "      ");
    }
}

/* The kernel view (docs/metrics.md, "Kernel view"). */
static void kernel_section(FILE *f, const hl_report_t *r)
{
    const hl_kernel_report_t *k = r->kernel;
    if (!k) {
        fprintf(f, "\nkernel: " HL_NO_KERNEL_MSG "\n");
        return;
    }
    fprintf(f, "\nkernel: %" PRIu64 " events, %" PRIu64 " dropped, pages of %" PRIu64 " B\n",
            k->events, k->dropped, k->page);
    if (k->rss_samples)
        fprintf(f,
                "  RSS (sampled)  %" PRIu64 " samples, peak %" PRIu64 " B (anonymous %" PRIu64
                ") at %.6f s, end %" PRIu64 " B\n",
                k->rss_samples, k->rss_peak, k->anon_peak, (double)k->rss_peak_ts / 1e9,
                k->rss_end);
    else
        fprintf(f, "  RSS (sampled)  no samples\n");
    fprintf(f,
            "  at the peak of R: heap resident %" PRIu64 " B, live usable %" PRIu64
            " B, held %" PRIu64 " B",
            k->peak_heap_resident, k->peak_U, k->peak_H);
    if (k->peak_has_rss)
        fprintf(f, ", RSS %" PRIu64 " B\n", k->peak_rss);
    else
        fprintf(f, ", RSS not sampled yet\n");
    fprintf(f, "    resident in live blocks                        %14" PRIu64 " B\n",
            k->peak_res_blocks);
    fprintf(f, "    fragmentation RSS cost (held free but touched) %14" PRIu64 " B\n",
            k->frag_rss_cost);
    if (k->peak_has_rss)
        fprintf(f, "    resident outside the heap (RSS - heap resident) %13" PRId64 " B\n",
                k->other_rss);
    fprintf(f, "    live but not resident                          %14" PRIu64 " B\n",
            k->live_untouched);
    fprintf(f, "    held but not resident                          %14" PRIu64 " B\n",
            k->held_untouched);
    fprintf(f,
            "  page faults  %" PRIu64 " pages in %" PRIu64 " runs: %" PRIu64 " pages (%" PRIu64
            " runs) in live blocks, %" PRIu64 " in free allocator memory, %" PRIu64
            " outside the allocator's regions\n",
            k->fault_pages, k->fault_runs, k->pages_in_blocks, k->runs_in_blocks,
            k->pages_heap_free, k->pages_outside);
    int any = 0;
    for (int p = 0; p < HL_MAX_PATHS; p++)
        any |= k->path[p].runs != 0;
    if (any) {
        fprintf(f, "  page faults per allocation path\n    %-18s %10s %10s\n", "path", "pages",
                "runs");
        for (int p = 0; p < HL_MAX_PATHS; p++) {
            if (!k->path[p].runs) continue;
            char name[32];
            path_label(name, sizeof name, p);
            fprintf(f, "    %-18s %10" PRIu64 " %10" PRIu64 "\n", name, k->path[p].pages,
                    k->path[p].runs);
        }
        fprintf(f, "  page faults per size class\n    %-18s %10s %10s\n", "class", "pages", "runs");
        for (int c = 0; c < HL_NCLASSES; c++) {
            if (!k->cls[c].runs) continue;
            char name[32];
            snprintf(name, sizeof name, "%d (%u B)", c, hl_class_slot((unsigned)c));
            fprintf(f, "    %-18s %10" PRIu64 " %10" PRIu64 "\n", name, k->cls[c].pages,
                    k->cls[c].runs);
        }
        for (int t = HL_TIER_MID; t <= HL_TIER_LARGE; t++)
            if (k->tier[t].runs)
                fprintf(f, "    %-18s %10" PRIu64 " %10" PRIu64 "\n",
                        t == HL_TIER_MID ? "mid (no class)" : "large (no class)", k->tier[t].pages,
                        k->tier[t].runs);
    }
    fprintf(f, "  held but never touched: %" PRIu64 " of %" PRIu64 " B mapped\n",
            k->never_touched_bytes, k->mapped_bytes);
    fprintf(f, "    %-14s %9s %14s %14s %14s\n", "purpose", "mappings", "bytes", "touched",
            "never touched");
    for (int g = 0; g < HL_KREGIONS; g++) {
        const hl_kregion_t *x = &k->region[g];
        if (!x->mappings) continue;
        fprintf(f, "    %-14s %9" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n",
                hl_kregion_names[g], x->mappings, x->bytes, x->touched, x->never_touched);
    }
}

/* The leak scan's classes (leakclass.h), after the leaks section. */
static void leak_classes_text(FILE *f, const hl_report_t *r, int top)
{
    const hl_leakclass_report_t *lc = r->leakclass;
    if (!lc) return;
    fprintf(f,
            "\nleak classes (reachability scan at exit: %" PRIu64 " process%s, %" PRIu64
            " of %" PRIu64 " other threads scanned, %s)\n",
            lc->scans, lc->scans == 1 ? "" : "es", lc->threads_scanned, lc->threads,
            hl_leakclass_status(lc->status));
    for (int k = 1; k <= 3; k++)
        fprintf(f, "  %-16s %10" PRIu64 " blocks %14" PRIu64 " bytes\n", hl_leakclass_labels[k],
                lc->blocks[k], lc->bytes[k]);
    if (lc->blocks[0])
        fprintf(f, "  %-16s %10" PRIu64 " blocks %14" PRIu64 " bytes (allocated after the scan)\n",
                hl_leakclass_labels[0], lc->blocks[0], lc->bytes[0]);
    fprintf(f, "  leaked (definitely + indirectly lost): %" PRIu64 " blocks, %" PRIu64 " bytes\n",
            lc->blocks[1] + lc->blocks[2], lc->bytes[1] + lc->bytes[2]);
    if (!lc->nsites) return;
    fprintf(f, "  lost by allocation stack:\n");
    for (size_t i = 0; i < lc->nsites && i < (size_t)top; i++) {
        const hl_leak_site_t *s = &lc->sites[i];
        fprintf(f,
                "  %" PRIu64 " bytes definitely lost in %" PRIu64 " blocks, %" PRIu64
                " bytes indirectly lost in %" PRIu64 " blocks, stack %" PRId64 "\n",
                s->definite_bytes, s->definite_blocks, s->indirect_bytes, s->indirect_blocks,
                s->stack);
        print_stack(f, r->db, s->stack, "      ");
    }
}

void hl_render_text(FILE *f, hl_report_t *r, const hl_render_opts_t *o)
{
    const hl_run_t *run = &r->run;
    fprintf(f, "heapledger report: %s%s\n", hl_safe(run->path),
            strcmp(r->source, "replay") ? "" : " (replay)");
    if (r->approximate)
        fprintf(f,
                "WARNING: %" PRId64 " events were discarded while recording: metrics are "
                "approximate (counts are lower bounds).\n",
                run->discarded);
    fprintf(f, "\nrun\n");
    fprintf(f, "  command       %s\n", hl_safe(run->command));
    fprintf(f, "  options       %s\n", *run->options ? hl_safe(run->options) : "(defaults)");
    fprintf(f, "  host          %s   version %s   tsc %.3f GHz\n",
            *run->host ? hl_safe(run->host) : "?", *run->version ? hl_safe(run->version) : "?",
            (double)run->tsc_hz / 1e9);
    fprintf(f, "  duration      %.9f s", r->duration_s);
    if (r->from_ns >= 0 || r->to_ns >= 0) {
        fprintf(f, "   window from %.9f s", r->from_ns > 0 ? (double)r->from_ns / 1e9 : 0.0);
        if (r->to_ns >= 0)
            fprintf(f, " to %.9f s", (double)r->to_ns / 1e9);
        else
            fprintf(f, " to the end");
    }
    fprintf(f, "\n");
    fprintf(f, "  events        %" PRId64 " recorded, %" PRId64 " discarded\n", run->events,
            run->discarded);
    fprintf(f, "  processes     %" PRId64 "%s   threads %" PRId64 "\n", run->processes,
            r->pid > 0 ? " (filtered)" : "", run->threads);
    fprintf(f,
            "  operations    %" PRIu64 " allocs, %" PRIu64 " frees, %" PRIu64 " reallocs, %" PRIu64
            " failed, %" PRIu64 " frees of unknown blocks\n",
            r->allocs, r->frees, r->reallocs, r->failed, r->orphan_frees);
    if (run->arena_size > 0) fprintf(f, "  arena         %" PRId64 " bytes\n", run->arena_size);

    fprintf(f, "\nmemory (bytes)          requested       usable         held\n");
    fprintf(f, "  at peak          %14" PRIu64 " %12" PRIu64 " %12" PRIu64 "   at %.6f s\n",
            r->peak_R, r->peak_U, r->peak_H, (double)r->peak_ts / 1e9);
    fprintf(f, "  at end           %14" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", r->end_R, r->end_U,
            r->end_H);
    fprintf(f, "  largest                         %12" PRIu64 " %12" PRIu64 "   (held from %s)\n",
            r->max_U, r->max_H, r->held_source);
    if (r->held_incomplete)
        fprintf(f, "  note: the recorded OS mappings held less than the usable bytes at times; "
                   "held is taken as at least usable there\n");
    fprintf(f, "\n                          at peak       at end\n");
    fprintf(f, "  utilisation R/H       ");
    pct(f, r->util_peak);
    fprintf(f, "    ");
    pct(f, r->util_end);
    fprintf(f, "   (largest ");
    pct(f, r->util_max);
    fprintf(f, ")\n  internal frag (U-R)/U ");
    pct(f, r->internal_peak);
    fprintf(f, "    ");
    pct(f, r->internal_end);
    fprintf(f, "\n  external frag (mid)   ");
    pct(f, r->external_peak);
    fprintf(f, "    ");
    pct(f, r->external_end);
    fprintf(f, "\n");
    if (r->external_peak >= 0)
        fprintf(f,
                "  mid free at peak: %" PRIu64 " bytes in %" PRIu64 " spans, largest %" PRIu64 "\n",
                r->frag_peak.free_bytes, r->frag_peak.spans, r->frag_peak.largest);
    if (r->has_failure) {
        fprintf(f,
                "  first failed allocation: %" PRIu64 " bytes at %.6f s (seq %" PRId64 "), %" PRIu64
                " bytes live: utilisation before exhaustion ",
                r->fail_size, (double)r->fail_ts / 1e9, r->fail_seq, r->fail_R);
        pct(f, r->fail_util);
        fprintf(f, "\n");
    }

    for (int op = 1; op <= 3; op++)
        if (r->op_count[op]) paths_table(f, r, op);
    site_cycles_section(f, r, o && o->top > 0 ? o->top : 10);

    fprintf(f, "\nlatency by request size (cycles)\n");
    fprintf(f, "  %-16s %10s %10s %10s %10s %10s %10s %10s\n", "size", "allocs", "alloc p50",
            "alloc p99", "free p50", "free p99", "pair p50", "pair p99");
    for (int b = 0; b < HL_SIZE_BUCKETS; b++) {
        const hl_size_stat_t *s = &r->sizes[b];
        if (!s->count) continue;
        char lab[48];
        fprintf(f, "  %-16s %10" PRIu64, size_label(s, lab, sizeof lab), s->count);
        double v[] = {s->alloc_p50, s->alloc_p99, s->free_p50,
                      s->free_p99,  s->pair_p50,  s->pair_p99};
        for (int q = 0; q < 6; q++) {
            if (v[q] < 0)
                fprintf(f, " %10s", "-");
            else
                fprintf(f, " %10.0f", v[q]);
        }
        fprintf(f, "\n");
    }

    int any_class = 0;
    for (int c = 0; c < r->nclasses; c++)
        any_class |= r->classes[c].peak != 0;
    if (any_class) {
        fprintf(f, "\nsize classes (tiny tier): slots\n");
        fprintf(f, "  %5s %6s %10s %10s %10s %12s %8s\n", "class", "slot", "allocs", "used", "peak",
                "held (est.)", "peak/held");
        for (int c = 0; c < r->nclasses; c++) {
            const hl_class_stat_t *cs = &r->classes[c];
            if (!cs->peak) continue;
            fprintf(f, "  %5d %6u %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %12" PRIu64, cs->cls,
                    cs->slot, cs->allocs, cs->used, cs->peak, cs->held);
            pct(f, cs->held ? (double)cs->peak / (double)cs->held : -1);
            fprintf(f, "\n");
        }
    }

    fprintf(f, "\nlifetimes\n");
    for (int b = 0; b <= HL_LIFE_BUCKETS; b++)
        if (r->lifetime[b])
            fprintf(f, "  %-12s %10" PRIu64 "\n", hl_life_labels[b], r->lifetime[b]);
    uint64_t nallocs = r->started;
    fprintf(f, "  temporary allocations (freed before the thread allocated again): %" PRIu64,
            r->temporary);
    if (nallocs)
        fprintf(f, " (%.2f%% of allocations)", 100.0 * (double)r->temporary / (double)nallocs);
    fprintf(f, "\n");

    int top = o && o->top > 0 ? o->top : 10;
    fprintf(f, "\ntop allocation sites by bytes\n  %14s %10s %10s  site\n", "bytes", "count",
            "temporary");
    for (size_t i = 0; i < r->nsites && i < (size_t)top; i++) {
        const hl_site_t *s = &r->sites[i];
        if (!s->count) continue;
        fprintf(f, "  %14" PRIu64 " %10" PRIu64 " %10" PRIu64 "  ", s->bytes, s->count,
                s->temporary);
        site_line(f, r->db, s->stack);
    }
    size_t *bc = hl_sites_by_count(r);
    fprintf(f, "\ntop allocation sites by count\n  %14s %10s  site\n", "count", "bytes");
    for (size_t i = 0; i < r->nsites && i < (size_t)top; i++) {
        const hl_site_t *s = &r->sites[bc[i]];
        if (!s->count) continue;
        fprintf(f, "  %14" PRIu64 " %10" PRIu64 "  ", s->count, s->bytes);
        site_line(f, r->db, s->stack);
    }
    free(bc);

    fprintf(f, "\nleaks at exit: %" PRIu64 " blocks, %" PRIu64 " bytes\n", r->leak_blocks,
            r->leak_bytes);
    if (r->leakclass) /* the headline of a scanned run: what it found lost (leak classes) */
        fprintf(f,
                "leaked at exit: %" PRIu64 " blocks, %" PRIu64
                " bytes (definitely + indirectly lost, reachability scan)\n",
                r->leakclass->blocks[1] + r->leakclass->blocks[2],
                r->leakclass->bytes[1] + r->leakclass->bytes[2]);
    if (r->leak_blocks) {
        fprintf(f, "  by size:\n  %14s %10s %14s\n", "size", "blocks", "bytes");
        for (size_t i = 0; i < r->nleak_sizes && i < (size_t)top; i++)
            fprintf(f, "  %14" PRIu64 " %10" PRIu64 " %14" PRIu64 "\n", r->leak_sizes[i].size,
                    r->leak_sizes[i].blocks, r->leak_sizes[i].bytes);
        size_t *lx;
        size_t nl = hl_leak_sites(r, &lx);
        fprintf(f, "  by allocation stack:\n");
        for (size_t i = 0; i < nl && i < (size_t)top; i++) {
            const hl_site_t *s = &r->sites[lx[i]];
            fprintf(f, "  %" PRIu64 " bytes in %" PRIu64 " blocks, stack %" PRId64 "\n",
                    s->live_bytes, s->live_blocks, s->stack);
            print_stack(f, r->db, s->stack, "      ");
        }
        free(lx);
    }
    for (int k = 1; k < 3; k++)
        if (r->supp_blocks[k])
            fprintf(f, "suppressed: %" PRIu64 " blocks, %" PRIu64 " bytes (%s)\n",
                    r->supp_blocks[k], r->supp_bytes[k], hl_supp_labels[k]);
    leak_classes_text(f, r, top);

    fprintf(f, "\nerrors: %zu\n", r->nerrors);
    for (size_t i = 0; i < r->nerrors && i < (size_t)top * 5; i++) {
        const hl_error_rec_t *e = &r->errors[i];
        fprintf(f,
                "  %s at 0x%" PRIx64 " (size %" PRIu64 ") pid %" PRId64 " tid %" PRId64
                " at %.6f s%s%s\n",
                hl_safe(e->kind), e->addr, e->size, e->pid, e->tid, (double)e->ts / 1e9,
                *e->details ? ": " : "", hl_safe(e->details));
        fprintf(f, "    detected at:\n");
        print_stack(f, r->db, e->stack, "      ");
        if (e->alloc_stack >= 0) {
            fprintf(f, "    allocated at:\n");
            print_stack(f, r->db, e->alloc_stack, "      ");
        }
        if (e->free_stack >= 0) {
            fprintf(f, "    freed at:\n");
            print_stack(f, r->db, e->free_stack, "      ");
        }
    }
    if (!r->replay) kernel_section(f, r);
}
