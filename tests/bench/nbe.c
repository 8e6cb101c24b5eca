/* Closure-heavy interpreter: normalisation by evaluation of untyped lambda terms.
 *
 * usage: nbe [TERMS [ITERATIONS [RUNS [CONFIG]]]]     (defaults 100, 15 and 5)
 *   TERMS random Church-numeral arithmetic expressions (plus, times, power over numerals
 *   0–6, value at most 3000) are built as de Bruijn terms and normalised by evaluation:
 *   eval builds closures and environment cells, quote reads values back under fresh
 *   variables. Every node (term, value, environment cell) is a separate allocation of
 *   24–40 B; after each term the whole object list is freed (LIFO) and the normal form is
 *   checked against the expected numeral. One iteration normalises all TERMS terms (built
 *   afresh each time); one run is ITERATIONS iterations; the program times RUNS runs, or
 *   fewer when they take long: it stops after the run that crosses 1.5 s.
 *   Heap-API build: the heap is created with "arena=32M" followed by CONFIG.
 * Figure: nbe.runs in runs per second (higher is better).
 */
#include "bench.h"
#include "bench_alloc.h"

#include <stdio.h>

/* Every object starts with the link of the per-term object list. */
typedef struct obj_s {
    struct obj_s *next_obj;
} obj_t;

typedef enum { T_VAR, T_LAM, T_APP } term_kind_t;
typedef struct term_s {
    obj_t o;
    term_kind_t kind;
    int index;            /* T_VAR: de Bruijn index */
    struct term_s *a, *b; /* T_LAM: body in a; T_APP: function a, argument b */
} term_t;

typedef enum { V_CLOSURE, V_NVAR, V_NAPP } value_kind_t;
struct env_s;
typedef struct value_s {
    obj_t o;
    value_kind_t kind;
    int level;             /* V_NVAR: de Bruijn level */
    const term_t *body;    /* V_CLOSURE */
    struct env_s *env;     /* V_CLOSURE */
    struct value_s *f, *x; /* V_NAPP: neutral function, argument */
} value_t;

typedef struct env_s {
    obj_t o;
    value_t *v;
    struct env_s *up;
} env_t;

static obj_t *g_objs;

static void *new_obj(size_t n)
{
    obj_t *o = b_malloc(n);
    if (!o) bench_die("nbe: allocation of %zu bytes failed", n);
    o->next_obj = g_objs;
    g_objs = o;
    return o;
}

static void free_all(void)
{
    while (g_objs) {
        obj_t *n = g_objs->next_obj;
        b_free(g_objs);
        g_objs = n;
    }
}

static term_t *var(int i)
{
    term_t *t = new_obj(sizeof *t);
    t->kind = T_VAR, t->index = i, t->a = t->b = NULL;
    return t;
}
static term_t *lam(term_t *body)
{
    term_t *t = new_obj(sizeof *t);
    t->kind = T_LAM, t->index = 0, t->a = body, t->b = NULL;
    return t;
}
static term_t *app(term_t *f, term_t *x)
{
    term_t *t = new_obj(sizeof *t);
    t->kind = T_APP, t->index = 0, t->a = f, t->b = x;
    return t;
}

static value_t *new_value(value_kind_t k)
{
    value_t *v = new_obj(sizeof *v);
    v->kind = k, v->level = 0, v->body = NULL, v->env = NULL, v->f = v->x = NULL;
    return v;
}

static value_t *eval(const term_t *t, env_t *env);

static value_t *apply(value_t *f, value_t *x)
{
    if (f->kind == V_CLOSURE) {
        env_t *e = new_obj(sizeof *e);
        e->v = x, e->up = f->env;
        return eval(f->body, e);
    }
    value_t *v = new_value(V_NAPP);
    v->f = f, v->x = x;
    return v;
}

static value_t *eval(const term_t *t, env_t *env)
{
    switch (t->kind) {
    case T_VAR:
        for (int i = t->index; i > 0; i--)
            env = env->up;
        return env->v;
    case T_LAM: {
        value_t *v = new_value(V_CLOSURE);
        v->body = t->a, v->env = env;
        return v;
    }
    default:
        return apply(eval(t->a, env), eval(t->b, env));
    }
}

static term_t *quote(int depth, value_t *v)
{
    switch (v->kind) {
    case V_CLOSURE: {
        value_t *fresh = new_value(V_NVAR);
        fresh->level = depth;
        return lam(quote(depth + 1, apply(v, fresh)));
    }
    case V_NVAR:
        return var(depth - v->level - 1);
    default:
        return app(quote(depth, v->f), quote(depth, v->x));
    }
}

/* Church numerals and arithmetic. */
static term_t *numeral(int n)
{
    term_t *body = var(0);
    for (int i = 0; i < n; i++)
        body = app(var(1), body);
    return lam(lam(body));
}
/* plus = λm.λn.λf.λx. m f (n f x) */
static term_t *plus(void)
{
    return lam(lam(lam(lam(app(app(var(3), var(1)), app(app(var(2), var(1)), var(0)))))));
}
/* times = λm.λn.λf. m (n f) */
static term_t *times(void)
{
    return lam(lam(lam(app(var(2), app(var(1), var(0))))));
}
/* power = λm.λn. n m */
static term_t *power(void)
{
    return lam(lam(app(var(0), var(1))));
}

/* Expression trees are described by a seed and rebuilt each iteration. */
typedef struct expr_s {
    int op; /* 0 numeral, 1 plus, 2 times, 3 power */
    int value;
    int n; /* numeral */
    struct expr_s *l, *r;
} expr_t;

static expr_t *gen(bench_rng_t *r, int depth)
{
    expr_t *e = bench_mem(sizeof *e);
    int op = depth == 0 ? 0 : (int)bench_rng_below(r, 4);
    if (op == 0) {
        e->op = 0, e->n = (int)bench_rng_below(r, 7), e->value = e->n;
        return e;
    }
    for (;;) {
        e->op = op, e->l = gen(r, depth - 1), e->r = gen(r, depth - 1);
        long a = e->l->value, b = e->r->value, v;
        if (op == 1)
            v = a + b;
        else if (op == 2)
            v = a * b;
        else {
            v = 1;
            for (long i = 0; i < b && v <= 3000; i++)
                v *= a;
        }
        if (v <= 3000 && !(op == 3 && b == 0)) { /* n^0 normalises to λx.x, not a numeral */
            e->value = (int)v;
            return e;
        }
        op = 1 + (int)bench_rng_below(r, 2);
    }
}

static term_t *build(const expr_t *e)
{
    switch (e->op) {
    case 0:
        return numeral(e->n);
    case 1:
        return app(app(plus(), build(e->l)), build(e->r));
    case 2:
        return app(app(times(), build(e->l)), build(e->r));
    default:
        return app(app(power(), build(e->l)), build(e->r));
    }
}

/* Returns n if t is the normal form of Church numeral n, else -1. */
static int numeral_value(const term_t *t)
{
    if (t->kind != T_LAM || t->a->kind != T_LAM) return -1;
    int n = 0;
    for (t = t->a->a; t->kind == T_APP; t = t->b, n++)
        if (t->a->kind != T_VAR || t->a->index != 1) return -1;
    return t->kind == T_VAR && t->index == 0 ? n : -1;
}

/* One iteration: build, normalise, check and free every term. */
static void normalise_all(expr_t **ex, uint64_t nterms)
{
    for (uint64_t i = 0; i < nterms; i++) {
        term_t *nf = quote(0, eval(build(ex[i]), NULL));
        int got = numeral_value(nf);
        if (got != ex[i]->value)
            bench_die("nbe: term %llu normalised to %d, expected %d", (unsigned long long)i, got,
                      ex[i]->value);
        free_all();
    }
}

int main(int argc, char **argv)
{
    if (argc > 5) bench_die("usage: nbe [TERMS [ITERATIONS [RUNS [CONFIG]]]]");
    uint64_t nterms = argc > 1 ? bench_parse_size(argv[1], "term count") : 100;
    uint64_t iters = argc > 2 ? bench_parse_size(argv[2], "iterations") : 15;
    uint64_t runs = bench_iters(argc > 3 ? bench_parse_size(argv[3], "runs") : 5);
    if (nterms == 0) bench_die("nbe: term count must be positive");
    expr_t **ex = bench_mem(nterms * sizeof *ex);
    bench_rng_t rng;
    bench_rng_seed(&rng, 99);
    for (uint64_t i = 0; i < nterms; i++)
        ex[i] = gen(&rng, 4);

    bench_alloc_open(argc > 4 ? argv[4] : NULL, "32M");
    /* A slow configuration stops after the run that crosses 1.5 s (at least one run). */
    uint64_t t0 = bench_now_ns(), t1 = t0, done = 0;
    while (done < runs && t1 - t0 < 1500000000ull) {
        for (uint64_t it = 0; it < iters; it++)
            normalise_all(ex, nterms);
        done++;
        t1 = bench_now_ns();
    }
    bench_alloc_close();
    bench_result("nbe.runs", (double)done / (double)(t1 - t0) * 1e9, "runs/s", "higher");
    return 0;
}
