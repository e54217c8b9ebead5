/*
 * conformance/runner.c — `tilec conform`: loads the cases, opens the plugin
 * under test, runs every item in its own forked child and collects the
 * statuses (see conform.h and conformance/README.md).
 *
 * Why fork per item: a plugin that crashes or hangs on one case must fail
 * that case and nothing else.  Each child gets its own process group, so a
 * timeout kills the child and anything it started (a compiler, say).  The
 * child reports back one short record through a pipe; a child that dies
 * before writing it has crashed.
 *
 * A tile-program case, in the child: load it through the frontend (public
 * API), derive the capabilities it needs from its IR (plus the header's),
 * report not-supported when the device does not declare one of them, else
 * run the reference interpreter and then the plugin directly through its
 * ABI table (compile, mem_alloc/write, launch, mem_read) on the same seeded
 * inputs, and judge with core/check.c — the same rules as `tilec run
 * --check`.
 */
#include "conform.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tilec/ir.h"
#include "tilec/sdk.h"

#define MSG_MAX 2048

const char *conform_status_name(conform_status_t s)
{
    switch (s) {
    case CONFORM_PASS: return "pass";
    case CONFORM_FAIL: return "fail";
    case CONFORM_NOT_SUPPORTED: return "not-supported";
    case CONFORM_CRASH: return "crash";
    case CONFORM_TIMEOUT: return "timeout";
    default: return "?";
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- capabilities ----------------------------------------------------------- */

static const struct { uint64_t bit; const char *name; } cap_names[] = {
    {TILEC_CAP_FLOAT16, "fp16"}, {TILEC_CAP_BFLOAT16, "bf16"}, {TILEC_CAP_FLOAT64, "fp64"},
    {TILEC_CAP_INT64, "int64"}, {TILEC_CAP_ATOMIC_FLOAT, "atomic-float"},
    {TILEC_CAP_ATOMIC_INT, "atomic-int"}, {TILEC_CAP_DYNAMIC_SHAPE, "dynamic-shape"},
    {TILEC_CAP_PRINT, "print"}, {TILEC_CAP_DEVICE_TIMER, "device-timer"},
    {TILEC_CAP_EMIT_SOURCE, "emit-source"}, {TILEC_CAP_EMIT_BINARY, "emit-binary"},
    {TILEC_CAP_GPU, "gpu"}, {TILEC_CAP_STREAM, "stream"},
};

void conform_caps_text(uint64_t caps, char *buf, size_t len)
{
    size_t used = 0;
    if (!len) {
        return;
    }
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof cap_names / sizeof cap_names[0]; i++) {
        if ((caps & cap_names[i].bit) && used < len) {
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", cap_names[i].name);
        }
    }
}

int conform_caps_parse(const char *text, uint64_t *caps)
{
    *caps = 0;
    while (*text) {
        size_t n = strcspn(text, ",");
        int found = n == 0;
        for (size_t i = 0; !found && i < sizeof cap_names / sizeof cap_names[0]; i++) {
            if (strlen(cap_names[i].name) == n && !strncmp(text, cap_names[i].name, n)) {
                *caps |= cap_names[i].bit;
                found = 1;
            }
        }
        if (!found) {
            return -1;
        }
        text += n;
        if (*text == ',') {
            text++;
        }
    }
    return 0;
}

static uint64_t dtype_caps(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_FLOAT16: return TILEC_CAP_FLOAT16;
    case TILEC_BFLOAT16: return TILEC_CAP_BFLOAT16;
    case TILEC_FLOAT64: return TILEC_CAP_FLOAT64;
    case TILEC_INT64:
    case TILEC_UINT64: return TILEC_CAP_INT64;
    default: return 0;
    }
}

/* Statement lists nest at most 512 deep in verified IR (docs/ir.md §4). */
static uint64_t stmt_caps(const tilec_ir_stmt_t *s, int depth)
{
    uint64_t c = 0;
    if (depth > 600) {
        return 0;
    }
    for (; s; s = s->next) {
        switch (s->kind) {
        case TILEC_ST_FOR: c |= stmt_caps(s->u.loop.body, depth + 1); break;
        case TILEC_ST_IF:
            c |= stmt_caps(s->u.cond.then, depth + 1) | stmt_caps(s->u.cond.els, depth + 1);
            break;
        case TILEC_ST_ATOMIC:
            c |= tilec_dtype_is_float(s->u.atomic.buf->dtype) ? TILEC_CAP_ATOMIC_FLOAT
                                                               : TILEC_CAP_ATOMIC_INT;
            break;
        case TILEC_ST_PRINT: c |= TILEC_CAP_PRINT; break;
        default: break;
        }
    }
    return c;
}

/* What a module needs: dtypes of its buffers and scalars, atomics, print,
 * T.dynamic symbols. */
static uint64_t module_caps(const tilec_ir_module_t *m)
{
    const tilec_ir_kernel_t *k = m->kernel;
    uint64_t c = 0;
    for (int i = 0; i < k->nbufs; i++) {
        c |= dtype_caps(k->bufs[i]->dtype);
    }
    for (int i = 0; i < k->nvars; i++) {
        if (k->vars[i]->kind == TILEC_VAR_SYM) {
            c |= TILEC_CAP_DYNAMIC_SHAPE;
        }
        if (k->vars[i]->kind == TILEC_VAR_LET) {
            c |= dtype_caps(k->vars[i]->dtype);
        }
    }
    return c | stmt_caps(k->body, 0);
}

/* ---- items and case files ----------------------------------------------------- */

conform_item_t *conform_item_add(conform_run_t *run, const char *id, conform_kind_t kind)
{
    conform_item_t *items = realloc(run->items, ((size_t)run->n + 1) * sizeof *items);
    if (!items) {
        return NULL;
    }
    run->items = items;
    conform_item_t *it = &items[run->n];
    memset(it, 0, sizeof *it);
    it->id = strdup(id);
    it->message = strdup("");
    if (!it->id || !it->message) {
        free(it->id);
        free(it->message);
        return NULL;
    }
    it->kind = kind;
    run->n++;
    return it;
}

void conform_item_free(conform_item_t *it)
{
    free(it->id);
    free(it->file);
    free(it->entry);
    free(it->defs);
    free(it->defs_buf);
    free(it->params_text);
    free(it->message);
    free(it->known_reason);
}

void conform_run_free(conform_run_t *run)
{
    for (int i = 0; i < run->n; i++) {
        conform_item_free(&run->items[i]);
    }
    free(run->items);
    run->items = NULL;
    run->n = 0;
    if (run->ctx) {
        tilec_context_destroy(run->ctx);
        run->ctx = NULL;
    }
    /* The plugin stays loaded: its table may still be referenced. */
}

/* Splits a parameter line ("-D M=70 -D N=45 --entry f") into defines. */
static int parse_params(conform_item_t *it, const char *line, char **err)
{
    size_t len = strlen(line);
    it->params_text = strdup(line);
    it->defs_buf = malloc(len + 1);
    it->defs = calloc(len / 2 + 1, sizeof *it->defs);
    if (!it->params_text || !it->defs_buf || !it->defs) {
        *err = check_strfmt("out of memory");
        return -1;
    }
    memcpy(it->defs_buf, line, len + 1);
    char *save = NULL;
    for (char *tok = strtok_r(it->defs_buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *def = NULL;
        if (!strcmp(tok, "-D")) {
            def = strtok_r(NULL, " \t", &save);
        } else if (!strncmp(tok, "-D", 2)) {
            def = tok + 2;
        } else if (!strcmp(tok, "--entry")) {
            char *e = strtok_r(NULL, " \t", &save);
            if (!e || !(it->entry = strdup(e))) {
                *err = check_strfmt("--entry needs a name");
                return -1;
            }
            continue;
        } else {
            *err = check_strfmt("unexpected '%s' in parameters (want -D NAME=VALUE or --entry NAME)", tok);
            return -1;
        }
        char *eq = def ? strchr(def, '=') : NULL;
        if (!eq || eq == def) {
            *err = check_strfmt("-D expects NAME=VALUE in '%s'", line);
            return -1;
        }
        *eq = '\0';
        it->defs[it->ndefs].name = def;
        it->defs[it->ndefs].value = eq + 1;
        it->ndefs++;
    }
    return 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r')) {
        s[--n] = '\0';
    }
    return s;
}

int conform_load_case(conform_run_t *run, const char *path, char **err)
{
    void *data;
    size_t len;
    *err = NULL;
    if (tilec_sdk_file_read(path, &data, &len) != 0) {
        *err = check_strfmt("%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    uint64_t caps = 0;
    check_tol_t tol = CHECK_TOL_AUTO;
    double timeout = 0;
    int nparams = 0, rc = 0, first = run->n;
    char *params[64];
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *name = strdup(base);
    if (!name) {
        free(data);
        *err = check_strfmt("out of memory");
        return -1;
    }
    if (strlen(name) > 3 && !strcmp(name + strlen(name) - 3, ".py")) {
        name[strlen(name) - 3] = '\0';
    }
    char *save = NULL;
    int lineno = 0;
    for (char *line = strtok_r((char *)data, "\n", &save); line && !rc;
         line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        if (!strncmp(line, "# conform-params:", 17)) {
            if (nparams == 64) {
                *err = check_strfmt("%s: more than 64 parameter sets", path);
                rc = -1;
            } else {
                params[nparams++] = trim(line + 17);
            }
        } else if (!strncmp(line, "# conform:", 10)) {
            char *s2 = NULL;
            for (char *kv = strtok_r(line + 10, " \t\r", &s2); kv && !rc; kv = strtok_r(NULL, " \t\r", &s2)) {
                char *eq = strchr(kv, '=');
                if (!eq) {
                    *err = check_strfmt("%s: '# conform:' expects KEY=VALUE, got '%s'", path, kv);
                    rc = -1;
                    break;
                }
                *eq = '\0';
                const char *v = eq + 1;
                if (!strcmp(kv, "caps")) {
                    uint64_t c;
                    if (conform_caps_parse(v, &c) != 0) {
                        *err = check_strfmt("%s: unknown capability in 'caps=%s'", path, v);
                        rc = -1;
                    }
                    caps |= c;
                } else if (!strcmp(kv, "tol")) {
                    int t = check_tol_from_name(v);
                    if (t < 0) {
                        *err = check_strfmt("%s: unknown tolerance class '%s' (auto, fp16, fp32, exact)", path, v);
                        rc = -1;
                    }
                    tol = (check_tol_t)t;
                } else if (!strcmp(kv, "timeout")) {
                    timeout = atof(v);
                } else if (!strcmp(kv, "covers")) {
                    /* documentation only: the primitives the case exercises */
                } else {
                    *err = check_strfmt("%s: unknown key '%s' in '# conform:'", path, kv);
                    rc = -1;
                }
            }
        }
    }
    if (!rc && nparams == 0) {
        params[nparams++] = "";
    }
    for (int i = 0; !rc && i < nparams; i++) {
        char id[512];
        if (nparams == 1) {
            snprintf(id, sizeof id, "%s", name);
        } else {
            snprintf(id, sizeof id, "%s/%d", name, i);
        }
        conform_item_t *it = conform_item_add(run, id, CONFORM_KIND_CASE);
        if (!it || !(it->file = strdup(path))) {
            *err = check_strfmt("out of memory");
            rc = -1;
            break;
        }
        it->caps = caps;
        it->tol = tol;
        it->timeout_s = timeout;
        if (parse_params(it, params[i], err) != 0) {
            char *e = check_strfmt("%s: %s", path, *err ? *err : "bad parameters");
            free(*err);
            *err = e;
            rc = -1;
        }
    }
    if (rc) {
        while (run->n > first) {
            conform_item_free(&run->items[--run->n]);
        }
    }
    free(name);
    free(data);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int conform_load_cases(conform_run_t *run, const char *dir, char **err)
{
    DIR *d = opendir(dir);
    *err = NULL;
    if (!d) {
        *err = check_strfmt("%s: cannot open the case directory: %s", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    int n = 0, cap = 0, rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 4 || strcmp(de->d_name + l - 3, ".py") || de->d_name[0] == '.') {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) {
                rc = -1;
                break;
            }
            names = nn;
        }
        if (!(names[n] = check_strfmt("%s/%s", dir, de->d_name))) {
            rc = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (rc) {
        *err = check_strfmt("out of memory");
    }
    if (n > 1) {
        qsort(names, (size_t)n, sizeof *names, cmp_str);
    }
    /* The suite digest: every case file's name and bytes, in order. */
    tilec_sha256_t sh;
    tilec_sha256_init(&sh);
    for (int i = 0; i < n; i++) {
        if (!rc) {
            rc = conform_load_case(run, names[i], err);
            void *data;
            size_t len;
            const char *b = strrchr(names[i], '/');
            tilec_sha256_update(&sh, b + 1, strlen(b + 1) + 1);
            if (!rc && tilec_sdk_file_read(names[i], &data, &len) == 0) {
                tilec_sha256_update(&sh, data, len);
                free(data);
            }
        }
        free(names[i]);
    }
    free(names);
    uint8_t dg[32];
    tilec_sha256_final(&sh, dg);
    tilec_sha256_hex(dg, run->suite_sha256);
    return rc;
}

int conform_load_known(conform_run_t *run, const char *path, char **err)
{
    FILE *f = fopen(path, "r");
    *err = NULL;
    if (!f) {
        *err = check_strfmt("%s: cannot open the known-failures file: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (!rc && getline(&line, &cap, f) >= 0) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#') {
            continue;
        }
        size_t idl = strcspn(s, " \t");
        char *reason = trim(s + idl);
        s[idl] = '\0';
        if (!*reason) {
            *err = check_strfmt("%s:%d: entry '%s' has no reason (write: ID REASON)", path, lineno, s);
            rc = -1;
            break;
        }
        int found = 0;
        for (int i = 0; i < run->n; i++) {
            conform_item_t *it = &run->items[i];
            /* "NAME" also matches every parameter set "NAME/k". */
            size_t l = strlen(s);
            if (!strcmp(it->id, s) || (!strncmp(it->id, s, l) && it->id[l] == '/' &&
                                       it->kind == CONFORM_KIND_CASE)) {
                free(it->known_reason);
                it->known = 1;
                it->known_reason = strdup(reason);
                found = 1;
            }
        }
        if (!found) {
            fprintf(stderr, "tilec conform: %s:%d: warning: no case '%s'\n", path, lineno, s);
        }
    }
    free(line);
    fclose(f);
    return rc;
}

/* ---- the plugin ------------------------------------------------------------- */

/* What the device probe sends back. */
typedef struct probe_msg {
    int ok;
    char why[512];
    tilec_pdevice_info_t info;
} probe_msg_t;

/* device_count and device_info, in a forked child: that is where a plugin
 * starts its vendor runtime (threads, handlers), and every case process is
 * forked from this one, so the runtime must start in the cases' processes,
 * never here.  (tilec_plugin_query, which the parent does call, must not
 * load anything: docs/plugin-abi.md §2.) */
static int load_table(conform_run_t *run, const char *path, char **err);

static int probe_device(conform_run_t *run, const char *path, char **err)
{
    int fds[2];
    probe_msg_t m;
    memset(&m, 0, sizeof m);
    if (pipe(fds) != 0) {
        *err = check_strfmt("pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        *err = check_strfmt("fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        uint32_t n = 0;
        char *e = NULL;
        close(fds[0]);
        if (load_table(run, path, &e) != 0) {
            snprintf(m.why, sizeof m.why, "%s", e ? e : "out of memory");
            ssize_t w = write(fds[1], &m, sizeof m);
            _exit(w == (ssize_t)sizeof m ? 0 : 1);
        }
        const tilec_plugin_t *t = run->table;
        tilec_pstatus_t st = t->device_count(&n);
        if (st != TILEC_PS_OK || n == 0) {
            const char *why = t->last_error();
            snprintf(m.why, sizeof m.why, "plugin '%s' is unavailable: %s", t->name,
                     why && *why ? why : "no devices found");
        } else if (run->device >= n) {
            snprintf(m.why, sizeof m.why, "plugin '%s' has %u device(s); there is no device %u", t->name, n,
                     run->device);
        } else {
            m.info.struct_size = sizeof m.info;
            st = t->device_info(run->device, &m.info);
            if (st != TILEC_PS_OK) {
                snprintf(m.why, sizeof m.why, "plugin '%s': device_info(%u) failed: %s", t->name, run->device,
                         t->last_error());
            } else {
                m.ok = 1;
            }
        }
        ssize_t w = write(fds[1], &m, sizeof m);
        _exit(w == (ssize_t)sizeof m ? 0 : 1);
    }
    close(fds[1]);
    size_t got = 0;
    while (got < sizeof m) {
        ssize_t r = read(fds[0], (char *)&m + got, sizeof m - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        got += (size_t)r;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (got != sizeof m) {
        *err = WIFSIGNALED(status) ? check_strfmt("%s: the plugin crashed while being queried or probing its devices "
                                          "(signal %d, %s)", path, WTERMSIG(status), strsignal(WTERMSIG(status)))
                                   : check_strfmt("%s: the plugin probe gave no answer", path);
        return -1;
    }
    if (!m.ok) {
        m.why[sizeof m.why - 1] = '\0';
        *err = check_strfmt("%s", m.why);
        return -1;
    }
    run->info = m.info;
    run->info.name[sizeof run->info.name - 1] = '\0';
    run->info.platform[sizeof run->info.platform - 1] = '\0';
    return 0;
}

/* dlopen, query (ABI 1.0..1.1) and check the table. */
static int load_table(conform_run_t *run, const char *path, char **err)
{
    /* dlopen searches the library path for a bare name. */
    char *rel = strchr(path, '/') ? strdup(path) : check_strfmt("./%s", path);
    if (!rel) {
        *err = check_strfmt("out of memory");
        return -1;
    }
    dlerror();
    run->handle = dlopen(rel, RTLD_NOW | RTLD_LOCAL);
    free(rel);
    if (!run->handle) {
        const char *e = dlerror();
        *err = check_strfmt("%s: not a loadable shared object: %s", path, e ? e : "?");
        return -1;
    }
    tilec_plugin_query_fn q = (tilec_plugin_query_fn)dlsym(run->handle, TILEC_PLUGIN_QUERY_SYMBOL);
    if (!q) {
        *err = check_strfmt("%s: does not export %s", path, TILEC_PLUGIN_QUERY_SYMBOL);
        return -1;
    }
    /* Plugins may keep the host struct: it lives as long as the process. */
    static tilec_plugin_host_t keep;
    memset(&keep, 0, sizeof keep);
    keep.struct_size = sizeof keep;
    keep.abi_min = TILEC_ABI_MAKE(1, 0);
    keep.abi_max = TILEC_PLUGIN_ABI_VERSION;
    keep.cache_dir = secure_getenv("TILEC_CONFORM_CACHE_DIR");
    const tilec_plugin_t *t = NULL;
    uint32_t abi = 0;
    tilec_pstatus_t st = q(&keep, &abi, &t);
    if (st != TILEC_PS_OK || !t) {
        *err = check_strfmt("%s: tilec_plugin_query failed (status %d): no common ABI version or no table",
                    path, (int)st);
        return -1;
    }
    if (t->struct_size < offsetof(tilec_plugin_t, launch) + sizeof t->launch || !t->name ||
        !t->last_error || !t->device_count || !t->device_info || !t->device_open ||
        !t->device_close || !t->compile || !t->module_data || !t->module_free || !t->mem_alloc ||
        !t->mem_write || !t->mem_read || !t->mem_free || !t->launch ||
        (abi >= TILEC_ABI_MAKE(1, 1) &&
         (t->struct_size < TILEC_PLUGIN_TABLE_SIZE_1_1 || !t->device_property || !t->module_info ||
          !t->lower || !t->extension))) {
        *err = check_strfmt("%s: the plugin table is incomplete (the loader would reject it)", path);
        return -1;
    }
    run->table = t;
    run->abi = abi;
    return 0;
}

int conform_open_plugin(conform_run_t *run, const char *path, uint32_t device, char **err)
{
    *err = NULL;
    run->plugin_path = path;
    run->device = device;
    if (conform_file_sha256(path, run->sha256) != 0) {
        *err = check_strfmt("%s: cannot read the plugin file: %s", path, strerror(errno));
        return -1;
    }
    if (run->compile_archs) {
        /* compile-only: no device to probe; the plugin's own capabilities
         * decide what is not-supported */
        if (load_table(run, path, err) != 0)
            return -1;
        memset(&run->info, 0, sizeof run->info);
        run->info.struct_size = sizeof run->info;
        snprintf(run->info.name, sizeof run->info.name, "compile-only: %s", run->compile_archs);
        snprintf(run->info.platform, sizeof run->info.platform, "no device (%s's compiler)", run->table->name);
        run->info.caps = run->table->caps;
        return 0;
    }
    /* First everything in a child (a plugin that crashes in its query or
     * its device probe takes only the child down), then the table here. */
    if (probe_device(run, path, err) != 0) {
        return -1;
    }
    return load_table(run, path, err);
}

/* --compile-only: the case's IR compiled for each arch of the list with no
 * device (the plugin must produce a binary for each); pass when all do. */
static conform_status_t compile_case(const conform_run_t *run, const char *ir, char *msg, size_t msglen)
{
    const tilec_plugin_t *t = run->table;
    char archs[256];
    snprintf(archs, sizeof archs, "%s", run->compile_archs);
    size_t k = 0;
    msg[0] = '\0';
    for (char *save = NULL, *a = strtok_r(archs, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
        tilec_pcompile_options_t opts;
        memset(&opts, 0, sizeof opts);
        opts.struct_size = sizeof opts;
        opts.opt_level = 3;
        opts.arch = a;
        tilec_pmodule_t *mod = NULL;
        tilec_pstatus_t st = t->compile(NULL, ir, strlen(ir), &opts, &mod);
        const void *bin = NULL;
        size_t blen = 0;
        if (st == TILEC_PS_OK && mod)
            st = t->module_data(mod, TILEC_PDATA_BINARY, &bin, &blen);
        if (st != TILEC_PS_OK || !bin || blen == 0) {
            snprintf(msg, msglen, "%s: compile failed (status %d): %s", a, (int)st,
                     st != TILEC_PS_OK ? t->last_error() : "no binary");
            if (mod)
                t->module_free(mod);
            return CONFORM_FAIL;
        }
        if (k < msglen)
            k += (size_t)snprintf(msg + k, msglen - k, "%s%s %zu bytes", k ? ", " : "compiled: ", a, blen);
        t->module_free(mod);
    }
    return CONFORM_PASS;
}

/* ---- one case, in the child ---------------------------------------------- */

static conform_status_t run_case(const conform_run_t *run, const conform_item_t *it, char *msg,
                                 size_t msglen)
{
    const tilec_plugin_t *t = run->table;
    tilec_context_t *ctx = run->ctx, *own = NULL;
    tilec_program_t *prog = NULL;
    check_set_t set = {0};
    tilec_pdevice_t *dev = NULL;
    tilec_pmodule_t *mod = NULL;
    tilec_pmem_t **mems = NULL;
    conform_status_t res = CONFORM_FAIL;
    tilec_arena_t arena;
    tilec_arena_init(&arena);
    msg[0] = '\0';
    /* The frontend and the interpreter need a context; made here, in the
     * case's process, like everything that may start a vendor runtime. */
    if (!ctx) {
        tilec_context_create("cpu", &own);
        ctx = own;
    }
    if (!ctx) {
        snprintf(msg, msglen, "suite error: cannot create a context (out of memory)");
        return CONFORM_FAIL;
    }

    if (tilec_program_load_file(ctx, it->file, it->defs, it->ndefs, it->entry, &prog) != TILEC_OK) {
        snprintf(msg, msglen, "suite error: the case does not compile: %s", tilec_context_message(ctx));
        goto out;
    }
    const char *ir = tilec_program_ir(prog);
    tilec_ir_module_t *m = NULL;
    char err[512];
    if (tilec_ir_read(&arena, ir, strlen(ir), &m, err, sizeof err) != 0) {
        snprintf(msg, msglen, "suite error: IR does not read back: %s", err);
        goto out;
    }
    /* a case in a newer tile IR than the plugin reads (float8 is 1.2) is
     * refused by the host before any plugin sees it: not-supported, as the
     * loader's version range says */
    uint32_t needs_ir = TILEC_IR_MAKE(1, (uint32_t)tilec_ir_module_minor_needed(m));
    uint32_t ir_max = run->abi >= TILEC_ABI_MAKE(1, 1) ? t->ir_max : TILEC_IR_MAKE(1, 0); /* ABI 1.0: IR 1.0 */
    if (needs_ir > ir_max) {
        snprintf(msg, msglen, "needs tile IR 1.%d, which the plugin does not read (it reads up to %u.%u)",
                 tilec_ir_module_minor_needed(m), TILEC_ABI_MAJOR(ir_max), TILEC_ABI_MINOR(ir_max));
        res = CONFORM_NOT_SUPPORTED;
        goto out;
    }
    uint64_t need = module_caps(m) | it->caps;
    uint64_t missing = need & ~run->info.caps;
    if (missing) {
        char names[256];
        conform_caps_text(missing, names, sizeof names);
        snprintf(msg, msglen, "needs %s, which the device does not declare", names);
        res = CONFORM_NOT_SUPPORTED;
        goto out;
    }
    if (run->compile_archs) {
        res = compile_case(run, ir, msg, msglen);
        goto out;
    }
    {
        char *e = NULL;
        if (check_set_make(prog, it->file, run->seed, &set, &e) != CHECK_OK) {
            snprintf(msg, msglen, "suite error: %s", e ? e : "out of memory");
            free(e);
            goto out;
        }
    }
    if (check_set_reference(ctx, prog, &set) != TILEC_OK) {
        snprintf(msg, msglen, "suite error: reference interpreter: %s", tilec_context_message(ctx));
        goto out;
    }
    tilec_pstatus_t st = t->device_open(run->device, &dev);
    if (st != TILEC_PS_OK || !dev) {
        snprintf(msg, msglen, "device_open failed (status %d): %s", (int)st, t->last_error());
        goto out;
    }
    tilec_pcompile_options_t opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.opt_level = 3;
    st = t->compile(dev, ir, strlen(ir), &opts, &mod);
    if (st != TILEC_PS_OK || !mod) {
        char names[256];
        conform_caps_text(need, names, sizeof names);
        if (st == TILEC_PS_UNSUPPORTED) {
            snprintf(msg, msglen,
                     "compile returned UNSUPPORTED although the device declares every capability "
                     "the case needs (%s): %s",
                     *names ? names : "none", t->last_error());
        } else {
            snprintf(msg, msglen, "compile failed (status %d): %s", (int)st, t->last_error());
        }
        goto out;
    }
    mems = calloc((size_t)set.n + 1, sizeof *mems);
    if (!mems) {
        snprintf(msg, msglen, "out of memory");
        goto out;
    }
    for (int i = 0; i < set.n; i++) {
        size_t bytes = set.t[i].bytes ? set.t[i].bytes : 1;
        st = t->mem_alloc(dev, TILEC_PMEM_DEVICE, bytes, &mems[i]);
        if (st != TILEC_PS_OK || !mems[i]) {
            mems[i] = NULL;
            snprintf(msg, msglen, "mem_alloc(%zu) failed (status %d): %s", bytes, (int)st, t->last_error());
            goto out;
        }
        st = t->mem_write(dev, mems[i], 0, set.t[i].init, set.t[i].bytes);
        if (st != TILEC_PS_OK) {
            snprintf(msg, msglen, "mem_write failed (status %d): %s", (int)st, t->last_error());
            goto out;
        }
    }
    tilec_plaunch_t la;
    memset(&la, 0, sizeof la);
    la.struct_size = sizeof la;
    la.nargs = (uint32_t)set.n;
    la.args = mems;
    la.nsyms = (uint32_t)set.nsyms;
    la.syms = set.syms;
    st = t->launch(dev, mod, &la);
    if (st != TILEC_PS_OK) {
        snprintf(msg, msglen, "launch failed (status %d): %s", (int)st, t->last_error());
        goto out;
    }
    for (int i = 0; i < set.n; i++) {
        st = t->mem_read(dev, mems[i], 0, set.t[i].out, set.t[i].bytes);
        if (st != TILEC_PS_OK) {
            snprintf(msg, msglen, "mem_read failed (status %d): %s", (int)st, t->last_error());
            goto out;
        }
    }
    {
        check_verdict_t v;
        check_set_judge(&set, it->tol, &v);
        if (v.ok) {
            res = CONFORM_PASS;
            snprintf(msg, msglen, "rel_fro_err=%.3e max_abs_err=%.3e tol=%s", v.worst.rel_fro,
                     v.worst.max_abs, check_tol_name(it->tol));
        } else {
            /* One line: the per-tensor lines joined with "; ". */
            for (char *nl = v.detail ? strchr(v.detail, '\n') : NULL; nl; nl = strchr(nl, '\n')) {
                *nl = nl[1] ? ';' : ' ';
            }
            snprintf(msg, msglen, "%s(tolerance class %s, bound %.0e)",
                     v.detail ? v.detail : "results differ from the reference ", check_tol_name(it->tol),
                     v.tol);
        }
        free(v.detail);
    }
out:
    if (mems) {
        for (int i = 0; i < set.n; i++) {
            if (mems[i]) {
                t->mem_free(dev, mems[i]);
            }
        }
        free(mems);
    }
    if (mod) {
        t->module_free(mod);
    }
    if (dev) {
        t->device_close(dev);
    }
    check_set_free(&set);
    tilec_program_free(prog);
    tilec_arena_destroy(&arena);
    tilec_context_destroy(own);
    return res;
}

/* ---- the fork pool ------------------------------------------------------------ */

typedef struct slot {
    pid_t pid;
    int fd;          /* read end of the result pipe */
    int item;
    double start, deadline;
} slot_t;

static void child_main(const conform_run_t *run, const conform_item_t *it, int fd)
{
    char msg[MSG_MAX];
    conform_status_t st;
    int null = open("/dev/null", O_RDWR);
    if (null >= 0 && !run->verbose) {
        dup2(null, 1);
        dup2(null, 2);
    }
    if (null > 2) {
        close(null);
    }
    /* Whatever the parent loaded (a vendor runtime, say) may have installed
     * handlers for fatal signals; a case must die of them visibly. */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        signal(fatal[i], SIG_DFL);
    }
    msg[0] = '\0';
    switch (it->kind) {
    case CONFORM_KIND_CASE: st = run_case(run, it, msg, sizeof msg); break;
    case CONFORM_KIND_ABI: st = conform_abi_run(run, it->index, msg, sizeof msg); break;
    default: st = conform_loader_run(run, it->index, msg, sizeof msg); break;
    }
    char rec[MSG_MAX + 16];
    int n = snprintf(rec, sizeof rec, "%d\n%s", (int)st, msg);
    if (n > (int)sizeof rec - 1) {
        n = (int)sizeof rec - 1;
    }
    ssize_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, rec + off, (size_t)(n - off));
        if (w <= 0) {
            break;
        }
        off += w;
    }
    close(fd);
    fflush(NULL);
    _exit(0);
}

static void set_result(conform_item_t *it, conform_status_t st, const char *msg)
{
    it->status = st;
    free(it->message);
    it->message = strdup(msg ? msg : "");
}

static void collect(conform_run_t *run, slot_t *s, int status, int timed_out)
{
    conform_item_t *it = &run->items[s->item];
    char buf[MSG_MAX + 32];
    size_t got = 0;
    for (;;) {
        ssize_t r = read(s->fd, buf + got, sizeof buf - 1 - got);
        if (r > 0) {
            got += (size_t)r;
            if (got == sizeof buf - 1) {
                break;
            }
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else {
            break;
        }
    }
    buf[got] = '\0';
    close(s->fd);
    it->time_s = now_s() - s->start;
    if (timed_out) {
        char m[128];
        snprintf(m, sizeof m, "did not finish within %.0f s (killed)",
                 it->timeout_s > 0 ? it->timeout_s : run->timeout_s);
        set_result(it, CONFORM_TIMEOUT, m);
    } else if (WIFSIGNALED(status)) {
        char m[128];
        snprintf(m, sizeof m, "crashed: signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        set_result(it, CONFORM_CRASH, m);
    } else if (got < 2 || buf[0] < '0' || buf[0] > '4' || buf[1] != '\n') {
        char m[128];
        snprintf(m, sizeof m, "the case process exited (status %d) without a result",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        set_result(it, CONFORM_CRASH, m);
    } else {
        set_result(it, (conform_status_t)(buf[0] - '0'), buf + 2);
    }
    if (it->known && it->status == CONFORM_PASS) {
        it->unexpected_pass = 1;
    }
    s->pid = 0;
}

static void progress(const conform_run_t *run, int done, const slot_t *slots, int jobs)
{
    /* Redraw when a result came in, else at most 4 times a second. */
    static int last_done = -1;
    static double last_t;
    double t = now_s();
    if (!run->progress || (done == last_done && t - last_t < 0.25)) {
        return;
    }
    last_done = done;
    last_t = t;
    const char *cur = "";
    for (int j = 0; j < jobs; j++) {
        if (slots[j].pid > 0) {
            cur = run->items[slots[j].item].id;
        }
    }
    fprintf(stderr, "\r\033[K[%d/%d] pass %d  fail %d  not-supported %d  crash %d  timeout %d  %s",
            done, run->n, run->counts[CONFORM_PASS], run->counts[CONFORM_FAIL],
            run->counts[CONFORM_NOT_SUPPORTED], run->counts[CONFORM_CRASH], run->counts[CONFORM_TIMEOUT],
            cur);
    fflush(stderr);
}

static int start(conform_run_t *run, slot_t *s, int item)
{
    int fds[2];
    if (pipe(fds) != 0) {
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        close(fds[0]);
        child_main(run, &run->items[item], fds[1]);
    }
    setpgid(pid, pid); /* both sides set it: no race with the kill below */
    close(fds[1]);
    s->pid = pid;
    s->fd = fds[0];
    s->item = item;
    s->start = now_s();
    double to = run->items[item].timeout_s > 0 ? run->items[item].timeout_s : run->timeout_s;
    s->deadline = s->start + to;
    return 0;
}

int conform_run_all(conform_run_t *run)
{
    int jobs = run->jobs > 0 ? run->jobs : 1;
    slot_t *slots = calloc((size_t)jobs, sizeof *slots);
    if (!slots) {
        return -1;
    }
    memset(run->counts, 0, sizeof run->counts);
    run->nknown = run->nunexpected = 0;
    double t0 = now_s();
    int next = 0, done = 0, running = 0, rc = 0;
    while (done < run->n) {
        for (int j = 0; j < jobs && next < run->n; j++) {
            if (slots[j].pid == 0) {
                if (start(run, &slots[j], next) != 0) {
                    set_result(&run->items[next], CONFORM_CRASH, "could not fork the case process");
                    rc = -1;
                    run->counts[CONFORM_CRASH]++;
                    done++;
                } else {
                    running++;
                }
                next++;
            }
        }
        if (running == 0) {
            continue;
        }
        int reaped = 0;
        for (int j = 0; j < jobs; j++) {
            if (slots[j].pid <= 0) {
                continue;
            }
            int status = 0;
            pid_t r = waitpid(slots[j].pid, &status, WNOHANG);
            int timed_out = 0;
            if (r == 0 && now_s() > slots[j].deadline) {
                kill(-slots[j].pid, SIGKILL);
                kill(slots[j].pid, SIGKILL);
                while (waitpid(slots[j].pid, &status, 0) < 0 && errno == EINTR) {
                }
                timed_out = 1;
                r = slots[j].pid;
            }
            if (r == slots[j].pid) {
                /* Leftover processes of the case's group (a compiler) go too. */
                kill(-slots[j].pid, SIGKILL);
                collect(run, &slots[j], status, timed_out);
                conform_item_t *it = &run->items[slots[j].item];
                run->counts[it->status]++;
                run->nknown += it->known && it->status != CONFORM_PASS;
                run->nunexpected += it->unexpected_pass;
                if (!run->progress && !run->quiet && (it->status != CONFORM_PASS || run->verbose) &&
                    it->status != CONFORM_NOT_SUPPORTED) {
                    fprintf(stderr, "%-14s %s: %s%s\n", conform_status_name(it->status), it->id,
                            it->message, it->known ? " (known failure)" : "");
                }
                done++;
                running--;
                reaped = 1;
            }
        }
        progress(run, done, slots, jobs);
        if (!reaped) {
            struct timespec ts = {0, 3 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (run->progress) {
        fprintf(stderr, "\r\033[K");
        for (int i = 0; i < run->n; i++) {
            const conform_item_t *it = &run->items[i];
            if (it->status != CONFORM_PASS && it->status != CONFORM_NOT_SUPPORTED) {
                fprintf(stderr, "%-14s %s: %s%s\n", conform_status_name(it->status), it->id,
                        it->message, it->known ? " (known failure)" : "");
            }
        }
    }
    run->wall_s = now_s() - t0;
    conform_results_digest(run->items, run->n, run->results_sha256);
    free(slots);
    return rc;
}
