/* tracer/ingest_salvage.c — reading what survives of a damaged CTF trace.
 *
 * src.ctf.fs refuses a whole trace when one stream file is damaged (a truncated last packet
 * after a crash or a full disk, say). Salvage (run by the decoder child, ingest_decoder.c)
 * builds, below the ingest's private scratch directory, a directory with the trace's
 * metadata and, for each stream file, either a symlink (the file opens alone), a copy
 * trimmed to its last complete packet (packet bounds from LTTng's index/NAME.idx), or
 * nothing (dropped). What was trimmed or dropped is described in `lost`.
 */
#include "ingest_internal.h"

#include <babeltrace2/babeltrace.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int probe_locked(const char *dir);

int hl_source_probe_fs(const char *dir)
{
    hl_bt_lock();
    int rc = probe_locked(dir);
    hl_bt_unlock();
    return rc;
}

static int probe_locked(const char *dir)
{
    const bt_plugin *p = NULL;
    if (bt_plugin_find("ctf", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &p) !=
            BT_PLUGIN_FIND_STATUS_OK ||
        !p)
        return -1;
    const bt_component_class_source *fs =
        bt_plugin_borrow_source_component_class_by_name_const(p, "fs");
    bt_graph *g = bt_graph_create(0);
    bt_value *params = bt_value_map_create();
    bt_value *inputs = NULL;
    bt_value_map_insert_empty_array_entry(params, "inputs", &inputs);
    bt_value_array_append_string_element(inputs, dir);
    const bt_component_source *c = NULL;
    int st = fs && g
                 ? bt_graph_add_source_component(g, fs, "probe", params, BT_LOGGING_LEVEL_NONE, &c)
                 : -1;
    bt_value_put_ref(params);
    bt_graph_put_ref(g);
    bt_plugin_put_ref(p);
    bt_current_thread_clear_error();
    return st == BT_GRAPH_ADD_COMPONENT_STATUS_OK ? 0 : -1;
}

static uint64_t be64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    return v;
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* End offset of the last complete packet of a stream of `size` bytes, per its LTTng index;
 * 0 when there is no usable index. *npk receives the number of complete packets. */
static uint64_t complete_end(const char *dir, const char *name, uint64_t size, unsigned *npk)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/index/%s.idx", dir, name);
    FILE *f = fopen(path, "rb");
    *npk = 0;
    if (!f) return 0;
    unsigned char h[16], e[256];
    uint64_t end = 0;
    if (fread(h, 1, 16, f) == 16 && be32(h) == 0xC1F1DCC1u) {
        uint32_t len = be32(h + 12);
        if (len >= 24 && len <= sizeof e)
            while (fread(e, 1, len, f) == len) {
                uint64_t off = be64(e), psize = be64(e + 8) / 8;
                if (off + psize > size) break;
                end = off + psize;
                (*npk)++;
            }
    }
    fclose(f);
    return end;
}

static int copy_prefix(const char *from, const char *to, uint64_t n)
{
    int in = open(from, O_RDONLY | O_CLOEXEC), out = -1;
    if (in < 0) return -1;
    out = open(to, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    char buf[1 << 16];
    int rc = out < 0 ? -1 : 0;
    while (!rc && n) {
        ssize_t k = read(in, buf, n < sizeof buf ? n : sizeof buf);
        if (k <= 0 || write(out, buf, (size_t)k) != k)
            rc = -1;
        else
            n -= (uint64_t)k;
    }
    close(in);
    if (out >= 0) close(out);
    return rc;
}

static void __attribute__((format(printf, 3, 4)))
append(char *lost, size_t lostlen, const char *fmt, ...)
{
    size_t l = strlen(lost);
    if (l + 3 >= lostlen) return;
    if (l) {
        lost[l++] = ';';
        lost[l++] = ' ';
        lost[l] = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lost + l, lostlen - l, fmt, ap);
    va_end(ap);
}

char *hl_salvage_ctf(const char *dir, const char *scratch, char *lost, size_t lostlen)
{
    char tmpl[1024], probe[1024];
    snprintf(tmpl, sizeof tmpl, "%s/salvage.XXXXXX", scratch);
    snprintf(probe, sizeof probe, "%s/probe.XXXXXX", scratch);
    if (!mkdtemp(tmpl)) return NULL;
    char src[4200], dst[4200], one[4200];
    snprintf(src, sizeof src, "%s/metadata", dir);
    snprintf(dst, sizeof dst, "%s/metadata", tmpl);
    if (symlink(src, dst) != 0) return NULL;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    /* A scratch dir to probe one stream file at a time. */
    if (!mkdtemp(probe)) {
        closedir(d);
        return NULL;
    }
    snprintf(one, sizeof one, "%s/metadata", probe);
    if (symlink(src, one) != 0) {
        closedir(d);
        return NULL;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat sb;
        snprintf(src, sizeof src, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "metadata") || stat(src, &sb) != 0 ||
            !S_ISREG(sb.st_mode))
            continue;
        snprintf(one, sizeof one, "%s/%s", probe, e->d_name);
        snprintf(dst, sizeof dst, "%s/%s", tmpl, e->d_name);
        int ok = symlink(src, one) == 0 && hl_source_probe_fs(probe) == 0;
        unlink(one);
        hl_decoder_heartbeat(); /* a probe finished: the watchdog sees progress */
        if (ok) {
            if (symlink(src, dst) != 0)
                append(lost, lostlen, "stream %s: cannot link it: %s", e->d_name, strerror(errno));
            continue;
        }
        unsigned npk = 0;
        uint64_t end = complete_end(dir, e->d_name, (uint64_t)sb.st_size, &npk);
        if (end && copy_prefix(src, one, end) == 0 && hl_source_probe_fs(probe) == 0) {
            unlink(one);
            copy_prefix(src, dst, end);
            append(lost, lostlen,
                   "stream %s damaged: kept its %u complete packets, lost %llu bytes", e->d_name,
                   npk, (unsigned long long)((uint64_t)sb.st_size - end));
        } else {
            unlink(one);
            append(lost, lostlen, "stream %s unreadable: dropped (%llu bytes)", e->d_name,
                   (unsigned long long)sb.st_size);
        }
    }
    closedir(d);
    snprintf(one, sizeof one, "%s/metadata", probe);
    unlink(one);
    rmdir(probe);
    return strdup(tmpl);
}

void hl_salvage_remove(const char *sdir)
{
    DIR *d = opendir(sdir);
    if (!d) return;
    struct dirent *e;
    char p[4200];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", sdir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(sdir);
}
