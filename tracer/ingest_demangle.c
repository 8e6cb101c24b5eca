/* tracer/ingest_demangle.c — C++ symbol names for people (see hl_demangle in ingest_internal.h).
 *
 * libdw gives symbol table names, mangled for C++ (`_ZNSt6vectorIiSaIiEE17_M_realloc_insert…`).
 * The demangler is libstdc++'s own `__cxa_demangle`, found with dlopen at the first mangled
 * name: heapledger stays a C program that does not load libstdc++ for runs without C++
 * frames (a dlopen costs about 1 ms once; linking it would cost every command its start-up).
 * Without libstdc++ on the machine names stay mangled.
 */
#include "ingest_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn demangler;
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;

static void demangler_load(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h) demangler = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
    /* h stays open: the function is used until the process ends. */
}

char *hl_demangle(const char *sym)
{
    if (!sym || strncmp(sym, "_Z", 2) != 0) return NULL;
    pthread_once(&demangler_once, demangler_load);
    if (!demangler) return NULL;
    /* A symbol version ("@@GLIBCXX_3.4") is not part of the mangled name: demangle the
     * name, keep the version after it. */
    const char *at = strchr(sym, '@');
    char *name = at ? strndup(sym, (size_t)(at - sym)) : NULL;
    if (at && !name) return NULL;
    int status = -1;
    char *d = demangler(name ? name : sym, NULL, NULL, &status);
    free(name);
    if (status != 0 || !d) {
        free(d);
        return NULL;
    }
    if (!at) return d;
    size_t n = strlen(d), m = strlen(at);
    char *r = realloc(d, n + m + 1);
    if (!r) {
        free(d);
        return NULL;
    }
    memcpy(r + n, at, m + 1);
    return r;
}
