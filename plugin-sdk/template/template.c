/*
 * plugin-sdk/template/template.c — a complete, minimal tilec backend plugin
 * for vendors to copy (docs/writing-a-backend.md walks through it).
 *
 * What it does: compile reads the tile IR text with the SDK reader, lowers
 * it with the SDK's SIMT lowering kit (tilec/simt.h) to C in which one call
 * of the kernel function is one GPU "thread" of one block, compiles that C
 * with the system C compiler into a shared object and loads it.  launch
 * runs each block with `threads` POSIX threads: block-wide (shared,
 * fragment) arrays are `static` in the kernel function, so the threads of a
 * block share them, and the kit's barriers are pthread_barrier_wait.  Blocks
 * run one after another; every thread waits at a barrier between blocks, so
 * a block's shared memory is never reused early.  That is slow and simple,
 * which is the point: replace the dialect table with your GPU's (OpenCL C,
 * CUDA C++, ...) and the cc/dlopen/pthread parts with your driver calls.
 *
 * Everything the ABI asks is here: version negotiation, struct_size
 * handling of every input and output struct, argument checks on every entry
 * point (TILEC_PS_INVALID_ARGUMENT, never a crash), messages through the
 * SDK's thread-local last error, and the kernel cache (host->cache_dir).
 *
 * Build flags: TEMPLATE_NAME (default "template") names the plugin;
 * TEMPLATE_MISLOWER deliberately mis-lowers T.exp (as exp2) so the
 * conformance tests can check that the runner catches a wrong backend.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/sdk.h"
#include "tilec/simt.h"

#ifndef TEMPLATE_NAME
#define TEMPLATE_NAME "template"
#endif
#define TEMPLATE_VERSION "1.0.0"

#define ERR(st, ...) (tilec_sdk_error_set(__VA_ARGS__), (st))

/* The host struct of the last query; its strings live as long as the host. */
static const tilec_plugin_host_t *g_host;
static uint32_t g_host_size;

/* ---- devices ------------------------------------------------------------------ */

struct tilec_pdevice { int open; };

static const char *t_last_error(void)
{
    return tilec_sdk_error_get();
}

static tilec_pstatus_t t_device_count(uint32_t *count)
{
    if (!count) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "device_count: count is NULL");
    }
    *count = 1; /* the host CPU; a GPU plugin asks its driver here */
    tilec_sdk_error_clear();
    return TILEC_PS_OK;
}

#define TEMPLATE_CAPS (TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 | \
                       TILEC_CAP_ATOMIC_FLOAT | TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE |      \
                       TILEC_CAP_PRINT | TILEC_CAP_EMIT_SOURCE | TILEC_CAP_EMIT_BINARY)

static tilec_pstatus_t t_device_info(uint32_t index, tilec_pdevice_info_t *info)
{
    tilec_pdevice_info_t d;
    if (!info) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "device_info: info is NULL");
    }
    if (info->struct_size < offsetof(tilec_pdevice_info_t, caps)) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "device_info: struct_size %u is too small", info->struct_size);
    }
    if (index != 0) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "device_info: no device %u (there is 1)", index);
    }
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    snprintf(d.name, sizeof d.name, "host CPU, one thread per work-item (template plugin)");
    snprintf(d.platform, sizeof d.platform, "C compiler + POSIX threads");
    d.caps = TEMPLATE_CAPS;
    d.max_threads = 1024;
    d.compute_units = 1;
    /* Write only what the caller's struct holds (it may be older). */
    uint32_t n = info->struct_size < sizeof d ? info->struct_size : (uint32_t)sizeof d;
    memcpy(info, &d, n);
    info->struct_size = n;
    return TILEC_PS_OK;
}

static tilec_pstatus_t t_device_open(uint32_t index, tilec_pdevice_t **out)
{
    if (!out || index != 0) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "device_open: %s", out ? "no such device" : "out is NULL");
    }
    tilec_pdevice_t *d = calloc(1, sizeof *d);
    if (!d) {
        return ERR(TILEC_PS_OUT_OF_MEMORY, "device_open: out of memory");
    }
    d->open = 1;
    *out = d;
    return TILEC_PS_OK;
}

static void t_device_close(tilec_pdevice_t *dev)
{
    free(dev);
}

/* ---- memory: plain host memory with its size in front ----------------------------- */

struct tilec_pmem { size_t size; _Alignas(16) unsigned char data[]; };

static tilec_pstatus_t t_mem_alloc(tilec_pdevice_t *dev, tilec_pmem_scope_t scope, size_t size,
                                   tilec_pmem_t **out)
{
    if (!dev || !out || (scope != TILEC_PMEM_DEVICE && scope != TILEC_PMEM_HOST)) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "mem_alloc: bad arguments");
    }
    if (size > SIZE_MAX - sizeof(tilec_pmem_t) - 64) {
        return ERR(TILEC_PS_OUT_OF_MEMORY, "mem_alloc: %zu bytes is too much", size);
    }
    tilec_pmem_t *m = calloc(1, sizeof *m + size + 64); /* slack for vector loads past the end */
    if (!m) {
        return ERR(TILEC_PS_OUT_OF_MEMORY, "mem_alloc: out of memory (%zu bytes)", size);
    }
    m->size = size;
    *out = m;
    return TILEC_PS_OK;
}

static int range_ok(const tilec_pmem_t *m, size_t off, size_t size)
{
    return off <= m->size && size <= m->size - off;
}

static tilec_pstatus_t t_mem_write(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                   const void *src, size_t size)
{
    if (!dev || !mem || (!src && size) || !range_ok(mem, offset, size)) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "mem_write: bad arguments or range past the end");
    }
    if (size) {
        memcpy(mem->data + offset, src, size);
    }
    return TILEC_PS_OK;
}

static tilec_pstatus_t t_mem_read(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset, void *dst,
                                  size_t size)
{
    if (!dev || !mem || (!dst && size) || !range_ok(mem, offset, size)) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "mem_read: bad arguments or range past the end");
    }
    if (size) {
        memcpy(dst, mem->data + offset, size);
    }
    return TILEC_PS_OK;
}

static void t_mem_free(tilec_pdevice_t *dev, tilec_pmem_t *mem)
{
    (void)dev;
    free(mem);
}

/* ---- compile --------------------------------------------------------------------- */

typedef void (*entry_fn)(void *const *args, const int64_t *syms);
typedef void (*setup_fn)(pthread_barrier_t *bar);
typedef void (*ids_fn)(const int64_t *block, const int64_t *thread);

struct tilec_pmodule {
    tilec_arena_t arena;
    tilec_ir_module_t *ir;      /* in arena: grid and shapes at launch */
    char *source;
    size_t source_len;
    void *binary;               /* the .so bytes, for module_data(BINARY) */
    size_t binary_len;
    void *handle;
    entry_fn entry;
    setup_fn setup;
    ids_fn ids;
    uint32_t threads[3], nthreads, nparams, nsyms;
};

/* The dialect: C run by POSIX threads.  tc_b/tc_t are thread-local block
 * and thread indices, set by the launcher before each call. */
static const char prelude[] =
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <pthread.h>\n"
    "static __thread int64_t tc_b[3], tc_t[3];\n"
    "static pthread_barrier_t *tc_bar;\n"
    "void tilec_setup(pthread_barrier_t *b) { tc_bar = b; }\n"
    "void tilec_ids(const int64_t *b, const int64_t *t) {\n"
    "  for (int i = 0; i < 3; i++) { tc_b[i] = b[i]; tc_t[i] = t[i]; }\n"
    "}\n"
    "static inline uint32_t tc_f2u(float f) { union { float f; uint32_t u; } x; x.f = f; return x.u; }\n"
    "static inline float tc_u2f(uint32_t u) { union { float f; uint32_t u; } x; x.u = u; return x.f; }\n"
    "static inline uint64_t tc_d2u(double f) { union { double f; uint64_t u; } x; x.f = f; return x.u; }\n"
    "static inline double tc_u2d(uint64_t u) { union { double f; uint64_t u; } x; x.u = u; return x.f; }\n";

static void fill_dialect(tilec_simt_dialect_t *d)
{
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->name = "c-pthreads";
    d->type_name[TILEC_BOOL] = "uint8_t";
    d->type_name[TILEC_INT8] = "int8_t";
    d->type_name[TILEC_INT16] = "int16_t";
    d->type_name[TILEC_INT32] = "int32_t";
    d->type_name[TILEC_INT64] = "int64_t";
    d->type_name[TILEC_UINT8] = "uint8_t";
    d->type_name[TILEC_UINT16] = "uint16_t";
    d->type_name[TILEC_UINT32] = "uint32_t";
    d->type_name[TILEC_UINT64] = "uint64_t";
    d->type_name[TILEC_FLOAT32] = "float";
    d->type_name[TILEC_FLOAT64] = "double";
    d->f16.mode = TILEC_SIMT_HALF_BITS;
    d->bf16.mode = TILEC_SIMT_HALF_BITS;
    d->int64_suffix = "LL";
    d->uint64_suffix = "ULL";
    d->f32_as_bits = "tc_f2u";
    d->bits_as_f32 = "tc_u2f";
    d->f64_as_bits = "tc_d2u";
    d->bits_as_f64 = "tc_u2d";
    d->func_qual = "static inline";
    d->global_qual = "";
    d->shared_qual = "static"; /* one copy shared by the block's threads */
    d->private_qual = "";
    d->restrict_kw = "restrict";
    d->kernel_qual = "void";
    d->kernel_name = "tilec_kernel";
    d->sym_type = "int64_t";
    d->block_idx[0] = "tc_b[0]";
    d->block_idx[1] = "tc_b[1]";
    d->block_idx[2] = "tc_b[2]";
    d->thread_idx[0] = "tc_t[0]";
    d->thread_idx[1] = "tc_t[1]";
    d->thread_idx[2] = "tc_t[2]";
    d->barrier = "pthread_barrier_wait(tc_bar);";
    /* No native atomics: the kit builds them from compare-and-swap. */
    d->cas32 = "__sync_val_compare_and_swap($p, $c, $v)";
    d->cas64 = "__sync_val_compare_and_swap($p, $c, $v)";
    d->math_generic = 0;
    d->has_rsqrt = 0;
    d->has_printf = 1;
    d->extra_prelude = prelude;
    d->shared_align = 16;
    d->printf_i64 = "%lld";
}

/* Runs argv, waiting for it; 0 when it exited with status 0.  Its output
 * goes to errfile (so it can be reported). */
static int run_cmd(char *const argv[], const char *errfile)
{
    pid_t pid = fork();
    if (pid < 0) {
        return -1;
    }
    if (pid == 0) {
        FILE *f = freopen(errfile, "w", stderr);
        (void)f;
        dup2(2, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Compiles src into a shared object; the bytes in *bin.  A private temporary
 * directory holds the files. */
/* The temporary directory: $TMPDIR, else /tmp (secure_getenv: a setuid
 * host must not be steered by its caller). */
static const char *tmp_root(void)
{
    const char *t = secure_getenv("TMPDIR");
    return t && *t && strlen(t) < 512 ? t : "/tmp";
}

static tilec_pstatus_t cc_build(const char *src, size_t len, void **bin, size_t *binlen)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/tilec-template-XXXXXX", tmp_root());
    if (!mkdtemp(dir)) {
        return ERR(TILEC_PS_COMPILE_ERROR, "cannot create a temporary directory in %s: %s", tmp_root(),
                   strerror(errno));
    }
    char cfile[640], sofile[640], errfile[640];
    snprintf(cfile, sizeof cfile, "%s/k.c", dir);
    snprintf(sofile, sizeof sofile, "%s/k.so", dir);
    snprintf(errfile, sizeof errfile, "%s/cc.log", dir);
    tilec_pstatus_t st = TILEC_PS_OK;
    if (tilec_sdk_cache_write(cfile, src, len) != 0) {
        st = ERR(TILEC_PS_COMPILE_ERROR, "cannot write %s: %s", cfile, strerror(errno));
    } else {
        const char *cc = getenv("CC");
        char *argv[] = {(char *)(cc && *cc ? cc : "cc"), "-O1", "-fPIC", "-shared", "-pthread",
                        "-w", "-o", sofile, cfile, "-lm", NULL};
        if (run_cmd(argv, errfile) != 0) {
            void *log = NULL;
            size_t ll = 0;
            tilec_sdk_file_read(errfile, &log, &ll);
            /* The first error line says the most. */
            char *line = log ? strstr(log, "error") : NULL;
            if (!line) {
                line = log;
            }
            while (line && line > (char *)log && line[-1] != '\n') {
                line--;
            }
            char *nl = line ? strchr(line, '\n') : NULL;
            if (nl) {
                *nl = '\0';
            }
            st = ERR(TILEC_PS_COMPILE_ERROR, "%s failed: %s", argv[0], line ? line : "no output");
            free(log);
        } else if (tilec_sdk_file_read(sofile, bin, binlen) != 0) {
            st = ERR(TILEC_PS_COMPILE_ERROR, "cannot read %s", sofile);
        }
    }
    unlink(cfile);
    unlink(sofile);
    unlink(errfile);
    rmdir(dir);
    return st;
}

/* Loads the object: from the bytes via a temporary file (dlopen needs a
 * path); unlinked right after. */
static tilec_pstatus_t load_so(tilec_pmodule_t *m)
{
    char path[600];
    snprintf(path, sizeof path, "%s/tilec-template-so-XXXXXX", tmp_root());
    int fd = mkstemp(path);
    if (fd < 0) {
        return ERR(TILEC_PS_COMPILE_ERROR, "mkstemp: %s", strerror(errno));
    }
    size_t off = 0;
    while (off < m->binary_len) {
        ssize_t w = write(fd, (char *)m->binary + off, m->binary_len - off);
        if (w <= 0) {
            break;
        }
        off += (size_t)w;
    }
    close(fd);
    if (off != m->binary_len) {
        unlink(path);
        return ERR(TILEC_PS_COMPILE_ERROR, "cannot write the kernel object");
    }
    m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    unlink(path);
    if (!m->handle) {
        const char *e = dlerror();
        return ERR(TILEC_PS_COMPILE_ERROR, "dlopen of the kernel failed: %s", e ? e : "?");
    }
    m->entry = (entry_fn)dlsym(m->handle, "tilec_entry");
    m->setup = (setup_fn)dlsym(m->handle, "tilec_setup");
    m->ids = (ids_fn)dlsym(m->handle, "tilec_ids");
    if (!m->entry || !m->setup || !m->ids) {
        return ERR(TILEC_PS_COMPILE_ERROR, "the kernel object lacks its entry points");
    }
    return TILEC_PS_OK;
}

/* Appends the entry wrapper: tilec_entry(args, syms) calls the kernel with
 * its typed parameters (void * converts implicitly in C). */
static char *with_entry(const tilec_simt_result_t *r, size_t *len)
{
    size_t cap = r->source_len + 256 + (size_t)(r->nparams + r->nsyms) * 16;
    char *s = malloc(cap);
    if (!s) {
        return NULL;
    }
    size_t n = (size_t)snprintf(s, cap, "%s\nvoid tilec_entry(void *const *a, const int64_t *s) {\n  (void)s;\n  tilec_kernel(",
                                r->source);
    for (uint32_t i = 0; i < r->nparams; i++) {
        n += (size_t)snprintf(s + n, cap - n, "%sa[%u]", i ? ", " : "", i);
    }
    for (uint32_t i = 0; i < r->nsyms; i++) {
        n += (size_t)snprintf(s + n, cap - n, "%ss[%u]", r->nparams + i ? ", " : "", i);
    }
    n += (size_t)snprintf(s + n, cap - n, ");\n}\n");
    *len = n;
    return s;
}

/* The kit writes the shared qualifier both where block-wide arrays are
 * declared (here `static`: one copy per block, shared by its threads) and
 * as the address space of pointers into them, for atomics.  C has no
 * address spaces, so the pointer casts lose the word again.  (A GPU
 * dialect, where the qualifier is an address space, needs none of this.) */
static void strip_static_casts(char *s)
{
    static const char *const pats[] = {"volatile static ", "(static "};
    for (int k = 0; k < 2; k++) {
        size_t pl = strlen(pats[k]);
        for (char *p = strstr(s, pats[k]); p; p = strstr(p, pats[k])) {
            size_t keep = k == 0 ? 9 : 1; /* "volatile " or "(" */
            memmove(p + keep, p + pl, strlen(p + pl) + 1);
            p += keep;
        }
    }
}

#ifdef TEMPLATE_MISLOWER
/* Deliberately wrong: every expf( becomes exp2f(. */
static void mislower(char *s)
{
    for (char *p = strstr(s, "expf("); p; p = strstr(p + 1, "expf(")) {
        if (p == s || p[-1] != '2') {
            memmove(p + 1, p, strlen(p) + 1);
            memcpy(p, "exp2f(", 6);
        }
    }
}
#endif

static void module_free_all(tilec_pmodule_t *m)
{
    if (!m) {
        return;
    }
    if (m->handle) {
        dlclose(m->handle);
    }
    free(m->source);
    free(m->binary);
    tilec_arena_destroy(&m->arena);
    free(m);
}

static tilec_pstatus_t t_compile(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                                 const tilec_pcompile_options_t *opts, tilec_pmodule_t **out)
{
    if (!dev || !ir || !out) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "compile: NULL %s", !dev ? "device" : !ir ? "ir" : "out");
    }
    /* Options: only opt_level exists for us; any struct_size is fine
     * because we read nothing past what the caller gave. */
    (void)opts;
    *out = NULL;
    tilec_pmodule_t *m = calloc(1, sizeof *m);
    if (!m) {
        return ERR(TILEC_PS_OUT_OF_MEMORY, "compile: out of memory");
    }
    tilec_arena_init(&m->arena);
    char err[512];
    if (tilec_ir_read(&m->arena, ir, ir_len, &m->ir, err, sizeof err) != 0) {
        module_free_all(m);
        return ERR(TILEC_PS_INVALID_ARGUMENT, "compile: bad tile IR: %s", err);
    }
    tilec_simt_dialect_t d;
    fill_dialect(&d);
    tilec_simt_result_t r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    if (tilec_simt_generate(m->ir, &d, &r, err, sizeof err) != 0) {
        module_free_all(m);
        return ERR(TILEC_PS_UNSUPPORTED, "compile: %s", err);
    }
    strip_static_casts(r.source);
    r.source_len = strlen(r.source);
    m->source = with_entry(&r, &m->source_len);
    for (int i = 0; i < 3; i++) {
        m->threads[i] = r.threads[i] ? r.threads[i] : 1;
    }
    m->nthreads = r.nthreads ? r.nthreads : 1;
    m->nparams = r.nparams;
    m->nsyms = r.nsyms;
    tilec_simt_result_free(&r);
    if (!m->source) {
        module_free_all(m);
        return ERR(TILEC_PS_OUT_OF_MEMORY, "compile: out of memory");
    }
#ifdef TEMPLATE_MISLOWER
    {
        char *grown = realloc(m->source, m->source_len * 2 + 16);
        if (grown) {
            m->source = grown;
            mislower(m->source);
            m->source_len = strlen(m->source);
        }
    }
#endif
    /* The kernel cache: the object for this exact source, if built before. */
    const char *cache = g_host && g_host_size >= offsetof(tilec_plugin_host_t, cache_dir) + sizeof(char *)
                            ? g_host->cache_dir : NULL;
    char *cpath = NULL;
    if (cache) {
        uint8_t dg[32];
        char hex[65];
        tilec_sha256(m->source, m->source_len, dg);
        tilec_sha256_hex(dg, hex);
        cpath = tilec_sdk_cache_path(cache, TEMPLATE_NAME "-", hex, ".so");
        if (cpath && tilec_sdk_file_read(cpath, &m->binary, &m->binary_len) != 0) {
            m->binary = NULL;
        }
    }
    tilec_pstatus_t st = TILEC_PS_OK;
    if (!m->binary) {
        st = cc_build(m->source, m->source_len, &m->binary, &m->binary_len);
        if (st == TILEC_PS_OK && cpath) {
            (void)tilec_sdk_cache_write(cpath, m->binary, m->binary_len);
        }
    }
    free(cpath);
    if (st == TILEC_PS_OK) {
        st = load_so(m);
    }
    if (st != TILEC_PS_OK) {
        module_free_all(m);
        return st;
    }
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t t_module_data(tilec_pmodule_t *mod, tilec_pdata_kind_t kind, const void **data,
                                     size_t *size)
{
    if (!mod || !data || !size) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "module_data: NULL argument");
    }
    if (kind == TILEC_PDATA_SOURCE) {
        *data = mod->source;
        *size = mod->source_len;
    } else if (kind == TILEC_PDATA_BINARY) {
        *data = mod->binary;
        *size = mod->binary_len;
    } else {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "module_data: unknown kind %d", (int)kind);
    }
    return TILEC_PS_OK;
}

static void t_module_free(tilec_pmodule_t *mod)
{
    module_free_all(mod);
}

/* ---- launch -------------------------------------------------------------------------- */

typedef struct worker {
    tilec_pmodule_t *m;
    void *const *args;
    const int64_t *syms;
    pthread_barrier_t *bar;
    int64_t grid[3];
    int64_t tid[3];
} worker_t;

static void *worker_main(void *p)
{
    worker_t *w = p;
    int64_t b[3];
    for (b[2] = 0; b[2] < w->grid[2]; b[2]++) {
        for (b[1] = 0; b[1] < w->grid[1]; b[1]++) {
            for (b[0] = 0; b[0] < w->grid[0]; b[0]++) {
                w->m->ids(b, w->tid);
                w->m->entry(w->args, w->syms);
                /* Nobody starts the next block while the block's shared
                 * memory is still in use. */
                pthread_barrier_wait(w->bar);
            }
        }
    }
    return NULL;
}

static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;

static tilec_pstatus_t t_launch(tilec_pdevice_t *dev, tilec_pmodule_t *mod, const tilec_plaunch_t *args)
{
    if (!dev || !mod || !args) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "launch: NULL %s", !dev ? "device" : !mod ? "module" : "args");
    }
    /* Fields up to syms are ABI 1.0's minimum; timing fields are optional. */
    if (args->struct_size < offsetof(tilec_plaunch_t, timed)) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "launch: struct_size %u is too small", args->struct_size);
    }
    if (args->nargs != mod->nparams || (args->nargs && !args->args)) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "launch: %u arguments for a kernel of %u parameters", args->nargs,
                   mod->nparams);
    }
    if (args->nsyms != mod->nsyms || (args->nsyms && !args->syms)) {
        return ERR(TILEC_PS_INVALID_ARGUMENT, "launch: %u symbol values for a kernel of %u symbols", args->nsyms,
                   mod->nsyms);
    }
    const tilec_ir_kernel_t *k = mod->ir->kernel;
    void **ptrs = calloc((size_t)mod->nparams + 1, sizeof *ptrs);
    if (!ptrs) {
        return ERR(TILEC_PS_OUT_OF_MEMORY, "launch: out of memory");
    }
    for (uint32_t i = 0; i < args->nargs; i++) {
        uint64_t need = 0;
        if (!args->args[i]) {
            free(ptrs);
            return ERR(TILEC_PS_INVALID_ARGUMENT, "launch: argument %u is NULL", i);
        }
        if (tilec_simt_param_bytes(k, (int)i, args->syms, args->nsyms, &need) != 0 ||
            need > args->args[i]->size) {
            free(ptrs);
            return ERR(TILEC_PS_INVALID_ARGUMENT, "launch: argument %u holds %zu bytes, the kernel needs %llu", i,
                       args->args[i]->size, (unsigned long long)need);
        }
        ptrs[i] = args->args[i]->data;
    }
    int64_t grid[3];
    if (tilec_simt_grid(k, args->syms, args->nsyms, grid) != 0) {
        free(ptrs);
        return ERR(TILEC_PS_LAUNCH_ERROR, "launch: the grid does not evaluate for these symbols");
    }
    uint32_t n = mod->nthreads;
    worker_t *w = calloc(n, sizeof *w);
    pthread_t *th = calloc(n, sizeof *th);
    pthread_barrier_t bar;
    if (!w || !th || pthread_barrier_init(&bar, NULL, n) != 0) {
        free(w);
        free(th);
        free(ptrs);
        return ERR(TILEC_PS_OUT_OF_MEMORY, "launch: cannot set up %u threads", n);
    }
    /* The kernel object's barrier pointer is global to it: one launch of
     * a module at a time. */
    pthread_mutex_lock(&launch_lock);
    mod->setup(&bar);
    uint32_t started = 0;
    tilec_pstatus_t st = TILEC_PS_OK;
    for (uint32_t t = 0; t < n; t++) {
        w[t].m = mod;
        w[t].args = ptrs;
        w[t].syms = args->syms;
        w[t].bar = &bar;
        memcpy(w[t].grid, grid, sizeof grid);
        w[t].tid[0] = t % mod->threads[0];
        w[t].tid[1] = (t / mod->threads[0]) % mod->threads[1];
        w[t].tid[2] = t / (mod->threads[0] * mod->threads[1]);
    }
    /* Small stacks: a block of 1024 threads must fit. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    for (uint32_t t = 0; t < n; t++) {
        if (pthread_create(&th[t], &attr, worker_main, &w[t]) != 0) {
            st = ERR(TILEC_PS_LAUNCH_ERROR, "launch: cannot start thread %u of %u", t, n);
            break;
        }
        started++;
    }
    pthread_attr_destroy(&attr);
    if (started < n) {
        /* The started threads would wait forever at the barrier: this
         * template has no way to cancel them, so it cannot recover. */
        pthread_mutex_unlock(&launch_lock);
        free(ptrs);
        return st;
    }
    for (uint32_t t = 0; t < n; t++) {
        pthread_join(th[t], NULL);
    }
    pthread_mutex_unlock(&launch_lock);
    pthread_barrier_destroy(&bar);
    free(w);
    free(th);
    free(ptrs);
    return st;
}

/* ---- the table and the query ------------------------------------------------------------- */

static const tilec_plugin_t table = {
    sizeof(tilec_plugin_t),
    TILEC_ABI_MAKE(1, 0),
    TEMPLATE_NAME,
    "tilec plugin SDK",
    TEMPLATE_VERSION,
    TEMPLATE_CAPS,
    t_last_error,
    t_device_count,
    t_device_info,
    t_device_open,
    t_device_close,
    t_compile,
    t_module_data,
    t_module_free,
    t_mem_alloc,
    t_mem_write,
    t_mem_read,
    t_mem_free,
    t_launch,
    NULL, /* mem_wrap: optional, for zero-copy DLPack import (docs/plugin-abi.md) */
    NULL, /* mem_address: optional, for zero-copy DLPack export */
};

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out);
TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out)
{
    /* abi_min and abi_max must be there; log and cache_dir are optional. */
    if (!host || !abi_out || !table_out || host->struct_size < offsetof(tilec_plugin_host_t, reserved)) {
        return TILEC_PS_INVALID_ARGUMENT;
    }
    /* We speak 1.0 only: pick it when the host's range holds it. */
    const uint32_t ours = TILEC_ABI_MAKE(1, 0);
    if (host->abi_min > ours || host->abi_max < ours) {
        return TILEC_PS_UNSUPPORTED;
    }
    g_host = host;
    g_host_size = host->struct_size;
    *abi_out = ours;
    *table_out = &table;
    return TILEC_PS_OK;
}
