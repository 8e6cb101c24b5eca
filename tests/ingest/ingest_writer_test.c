/* tests/ingest/ingest_writer_test.c — tracer/ingest_writer.c (the store's SQLite thread):
 * every item reaches the writer thread once and in order, the producer is held back when
 * every slot is with the writer (bounded memory), and after hl_writer_sync() the writer has
 * done everything put and touches nothing until the next put. */
#include "ingest_writer.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

typedef struct seen_s {
    uint64_t next;     /* the item expected next */
    uint64_t bad;      /* items out of order */
    int busy;          /* the writer is inside fn */
    int slow;          /* fn sleeps a little per slot */
    uint64_t *put;     /* the producer's count of items put */
    uint64_t max_lead; /* the most items put but not yet seen */
} seen_t;

static void take(void *ctx, void *items, size_t n)
{
    seen_t *s = ctx;
    __atomic_store_n(&s->busy, 1, __ATOMIC_SEQ_CST);
    if (s->slow) nanosleep(&(struct timespec){0, 2000000}, NULL);
    uint64_t *v = items;
    for (size_t i = 0; i < n; i++, s->next++)
        if (v[i] != s->next) s->bad++;
    uint64_t lead = __atomic_load_n(s->put, __ATOMIC_SEQ_CST) - s->next;
    if (lead > s->max_lead) s->max_lead = lead;
    __atomic_store_n(&s->busy, 0, __ATOMIC_SEQ_CST);
}

/* The item is counted before hl_writer_put hands its slot on: counted after, the writer
 * could see it before the count (a lead of -1, read as 2^64 - 1, on a loaded machine). */
static void put(hl_writer_t *w, uint64_t *count, uint64_t v)
{
    *(uint64_t *)hl_writer_next(w) = v;
    __atomic_store_n(count, *count + 1, __ATOMIC_SEQ_CST);
    hl_writer_put(w);
}

Test(writer, every_item_once_in_order)
{
    uint64_t count = 0;
    seen_t s = {.put = &count};
    hl_writer_t *w = hl_writer_new(sizeof(uint64_t), 100, take, &s);
    cr_assert_not_null(w);
    for (uint64_t i = 0; i < 1000003; i++)
        put(w, &count, i);
    hl_writer_free(w); /* hands on the last, partial slot */
    cr_assert_eq(s.next, 1000003);
    cr_assert_eq(s.bad, 0);
}

Test(writer, sync_waits_for_the_writer)
{
    uint64_t count = 0;
    seen_t s = {.put = &count, .slow = 1};
    hl_writer_t *w = hl_writer_new(sizeof(uint64_t), 64, take, &s);
    cr_assert_not_null(w);
    uint64_t i = 0;
    for (int round = 0; round < 20; round++) {
        for (int k = 0; k < 1 + round * 37; k++)
            put(w, &count, i++);
        hl_writer_sync(w);
        /* everything put is done, the writer is idle, also with a partial slot */
        cr_assert_eq(s.next, i, "round %d", round);
        cr_assert_eq(__atomic_load_n(&s.busy, __ATOMIC_SEQ_CST), 0);
    }
    hl_writer_sync(w); /* nothing put: returns at once */
    cr_assert_eq(s.next, i);
    hl_writer_free(w);
    cr_assert_eq(s.bad, 0);
}

Test(writer, a_slow_writer_holds_the_producer_back)
{
    uint64_t count = 0;
    seen_t s = {.put = &count, .slow = 1};
    enum { PER = 50 };
    hl_writer_t *w = hl_writer_new(sizeof(uint64_t), PER, take, &s);
    cr_assert_not_null(w);
    for (uint64_t i = 0; i < 100 * PER; i++)
        put(w, &count, i);
    hl_writer_free(w);
    cr_assert_eq(s.next, 100 * PER);
    cr_assert_eq(s.bad, 0);
    /* at most every slot full plus the item being put */
    cr_assert_leq(s.max_lead, (uint64_t)HL_WRITER_SLOTS * PER + 1, "%llu items ahead",
                  (unsigned long long)s.max_lead);
}
