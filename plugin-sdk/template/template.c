/*
 * plugin-sdk/template/template.c — a complete, minimal tilec backend plugin
 * for vendors to copy (docs/writing-a-backend.md walks through it).
 *
 * What it does: compile runs the SDK's lowering passes for this target's
 * description (tilec/lower.h: register fragments, the shared-memory plan,
 * barriers) and prints the lowered module with the SDK's SIMT kit
 * (tilec/simt.h) as C in which one call of the kernel function is one GPU
 * "thread" of one block, compiles that C with the system C compiler into a
 * shared object and loads it.  launch runs each block with `threads` POSIX
 * threads: block-wide (shared, fragment) arrays are `static` in the kernel
 * function (one byte pool holding the shared-memory plan), so the threads
 * of a block share them; register fragments are the function's own
 * arrays; the IR's barriers are pthread_barrier_wait.  Blocks run one after another; every thread
 * waits at a barrier between blocks, so a block's shared memory is never
 * reused early.  That is slow and simple, which is the point: replace the
 * dialect table with your GPU's (OpenCL C, CUDA C++, ...) and the
 * cc/dlopen/pthread parts with your driver calls.
 *
 * The ABI's bookkeeping is the SDK's plugin shell (tilec/shell.h): it
 * negotiates the version, checks every argument and struct_size, owns the
 * handles, reads the IR into the module, answers module_data and
 * module_info, and keeps the host's cache directory.  What is left here is
 * the backend itself: a table of hooks (`backend`, at the end) that get
 * only valid arguments.
 *
 * Build flags: TEMPLATE_NAME (default "template") names the plugin;
 * TEMPLATE_MISLOWER deliberately mis-lowers T.exp (as exp2) so the
 * conformance tests can check that the runner catches a wrong backend;
 * TEMPLATE_ABI_1_0 builds a plugin that speaks only ABI 1.0 and reads only
 * tile IR 1.0 (the host must keep loading such plugins); it also skips the
 * lowering passes, so it keeps the kit's high-level path (shared memory
 * for every fragment, the kit's own barriers) certified.
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
#include "tilec/lower.h"
#include "tilec/plugin.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"
#include "tilec/simt.h"

#ifndef TEMPLATE_NAME
#define TEMPLATE_NAME "template"
#endif
#define TEMPLATE_VERSION "1.1.0"

#ifdef TEMPLATE_ABI_1_0
#define TEMPLATE_ABI TILEC_ABI_MAKE(1, 0)
#else
#define TEMPLATE_ABI TILEC_PLUGIN_ABI_VERSION
#endif
/* The tile IR versions compile reads: high-level modules are lowered
 * here, lowered ones (a .tir with layouts) printed as they are. */
#ifdef TEMPLATE_ABI_1_0
#define TEMPLATE_IR_MAX TILEC_IR_MAKE(1, 0)
#else
#define TEMPLATE_IR_MAX TILEC_IR_MAKE(1, 1)
#endif

#define ERR(st, ...) (tilec_sdk_error_set(__VA_ARGS__), (st))

#define TEMPLATE_CAPS (TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 | \
                       TILEC_CAP_ATOMIC_FLOAT | TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE |      \
                       TILEC_CAP_PRINT | TILEC_CAP_EMIT_SOURCE | TILEC_CAP_EMIT_BINARY)

/* ---- devices: the host CPU, one device ------------------------------------------ */

static tilec_pstatus_t t_device_count(uint32_t *count)
{
    *count = 1; /* a GPU plugin loads its runtime and asks its driver here */
    return TILEC_PS_OK;
}

static tilec_pstatus_t t_device_info(uint32_t index, tilec_pdevice_info_t *d)
{
    (void)index;
    snprintf(d->name, sizeof d->name, "host CPU, one thread per work-item (template plugin)");
    snprintf(d->platform, sizeof d->platform, "C compiler + POSIX threads");
    d->caps = TEMPLATE_CAPS;
    d->max_threads = 1024;
    d->compute_units = 1;
    return TILEC_PS_OK;
}

/* Typed properties: what a tuner or the host may ask.  Keys this backend
 * cannot tell answer UNSUPPORTED; the shell fills the ones device_info has. */
static tilec_pstatus_t t_device_property(uint32_t index, uint32_t key, tilec_pvalue_t *v)
{
    (void)index;
    switch (key) {
    case TILEC_PROP_ARCH: return tilec_shell_value_str(v, "c-pthreads");
    case TILEC_PROP_SUBGROUP_SIZE: return tilec_shell_value_int(v, 1);
    case TILEC_PROP_MMA_KINDS: return tilec_shell_value_str(v, "");
    default: return TILEC_PS_UNSUPPORTED;
    }
}

/* ---- memory: plain host memory -------------------------------------------------- */

typedef struct t_mem { unsigned char *data; } t_mem_t;

static tilec_pstatus_t t_mem_alloc(void *dev, tilec_pmem_scope_t scope, size_t size, void *mem)
{
    (void)dev;
    (void)scope;
    t_mem_t *m = mem;
    m->data = calloc(1, size + 64); /* slack for vector loads past the end */
    return m->data ? TILEC_PS_OK : ERR(TILEC_PS_OUT_OF_MEMORY, TEMPLATE_NAME ": mem_alloc: out of memory (%zu bytes)", size);
}

static tilec_pstatus_t t_mem_write(void *dev, void *mem, size_t offset, const void *src, size_t size)
{
    (void)dev;
    memcpy(((t_mem_t *)mem)->data + offset, src, size);
    return TILEC_PS_OK;
}

static tilec_pstatus_t t_mem_read(void *dev, void *mem, size_t offset, void *dst, size_t size)
{
    (void)dev;
    memcpy(dst, ((t_mem_t *)mem)->data + offset, size);
    return TILEC_PS_OK;
}

static void t_mem_free(void *dev, void *mem)
{
    (void)dev;
    free(((t_mem_t *)mem)->data);
}

/* ---- compile --------------------------------------------------------------------- */

typedef void (*entry_fn)(void *const *args, const int64_t *syms);
typedef void (*setup_fn)(pthread_barrier_t *bar);
typedef void (*ids_fn)(const int64_t *block, const int64_t *thread);

/* The module's own state (the shell keeps the IR, source, binary, info). */
typedef struct t_module {
    void *handle;
    entry_fn entry;
    setup_fn setup;
    ids_fn ids;
    uint32_t threads[3], nthreads;
} t_module_t;

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
    d->shared_ptr_qual = "";   /* C has no address spaces: plain pointers */
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
        /* $CC may carry flags ("ccache cc", "clang -fsanitize=address"):
         * split on blanks, at most 16 words */
        const char *cc = getenv("CC");
        char ccbuf[1024];
        char *argv[16 + 10] = {0};
        int argc = 0;
        snprintf(ccbuf, sizeof ccbuf, "%s", cc && *cc ? cc : "cc");
        for (char *save = NULL, *w = strtok_r(ccbuf, " \t", &save); w && argc < 16;
             w = strtok_r(NULL, " \t", &save)) {
            argv[argc++] = w;
        }
        if (!argc) {
            argv[argc++] = "cc";
        }
        const char *fixed[] = {"-O1", "-fPIC", "-shared", "-pthread", "-w", "-o", sofile, cfile, "-lm"};
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
            argv[argc++] = (char *)fixed[i];
        }
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
static tilec_pstatus_t load_so(const tilec_shell_module_t *sm, t_module_t *m)
{
    char path[600];
    snprintf(path, sizeof path, "%s/tilec-template-so-XXXXXX", tmp_root());
    int fd = mkstemp(path);
    if (fd < 0) {
        return ERR(TILEC_PS_COMPILE_ERROR, "mkstemp: %s", strerror(errno));
    }
    size_t off = 0;
    while (off < sm->binary_len) {
        ssize_t w = write(fd, (char *)sm->binary + off, sm->binary_len - off);
        if (w <= 0) {
            break;
        }
        off += (size_t)w;
    }
    close(fd);
    if (off != sm->binary_len) {
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

static void t_module_free(tilec_shell_module_t *sm)
{
    t_module_t *m = sm->data;
    if (m->handle) {
        dlclose(m->handle);
    }
}

/* ---- the target description and lower (--emit lowered) --------------------------------------- *
 * What the SDK's lowering passes know of this "GPU" (tilec/target.h,
 * docs/lowering.md): block threads are POSIX threads, block-wide arrays
 * are host memory (so "shared memory" is large), no matrix instructions and
 * no asynchronous copies.  "Subgroups" of 32 threads with shuffles: rows of
 * register fragments may span 32 lanes, whose partial results the SIMT kit
 * combines through block memory (two barriers), so the template also runs
 * the kit's lane reductions that GPUs with warps get.  A GPU plugin puts
 * its device's numbers here, one description per arch. */

static tilec_target_desc_t target(void)
{
    tilec_target_desc_t t = tilec_target_simt_default("template (host threads)");
    t.subgroup_size = 32;
    t.flags = TILEC_TARGET_SUBGROUP_SHUFFLE | TILEC_TARGET_ROWS_RAGGED;
    t.smem_default = t.smem_optin = 4u << 20;
    t.smem_align = 64;
    return t;
}

static tilec_pstatus_t t_lower(void *dev, const tilec_pcompile_options_t *opts, tilec_shell_module_t *sm)
{
    (void)dev;
    (void)opts; /* one description for every arch */
    tilec_target_desc_t t = target();
    return tilec_lower_shell(TEMPLATE_NAME, &t, sm);
}

static tilec_pstatus_t t_compile(void *dev, const tilec_pcompile_options_t *opts, tilec_shell_module_t *sm)
{
    (void)dev;
    (void)opts; /* opt_level and the structured options mean nothing to cc -O1 here */
    t_module_t *m = sm->data;
    char err[512];
    tilec_simt_dialect_t d;
    fill_dialect(&d);
    tilec_simt_result_t r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
#ifdef TEMPLATE_ABI_1_0
    const tilec_ir_module_t *lm = sm->ir;
#else
    tilec_arena_t ar;
    tilec_arena_init(&ar);
    tilec_pstatus_t ls;
    tilec_target_desc_t t = target();
    const tilec_ir_module_t *lm = tilec_lower_shell_module(TEMPLATE_NAME, &t, sm, &ar, &ls);
    if (!lm) {
        tilec_arena_destroy(&ar);
        return ls; /* the SDK's message: "template: lower: ..." */
    }
#endif
    int gen = tilec_simt_generate(lm, &d, &r, err, sizeof err);
#ifndef TEMPLATE_ABI_1_0
    tilec_arena_destroy(&ar);
#endif
    if (gen != 0) {
        return ERR(TILEC_PS_UNSUPPORTED, TEMPLATE_NAME ": compile: %s", err);
    }
    sm->source = with_entry(&r, &sm->source_len);
    for (int i = 0; i < 3; i++) {
        m->threads[i] = r.threads[i] ? r.threads[i] : 1;
    }
    m->nthreads = r.nthreads ? r.nthreads : 1;
    sm->info.shared_static_bytes = (int64_t)r.shared_bytes;
    sm->info.shared_dynamic_bytes = 0;
    sm->info.max_threads = 1024;
    tilec_simt_result_free(&r);
    if (!sm->source) {
        return ERR(TILEC_PS_OUT_OF_MEMORY, TEMPLATE_NAME ": compile: out of memory");
    }
#ifdef TEMPLATE_MISLOWER
    {
        char *grown = realloc(sm->source, sm->source_len * 2 + 16);
        if (grown) {
            sm->source = grown;
            mislower(sm->source);
            sm->source_len = strlen(sm->source);
        }
    }
#endif
    /* The kernel cache: the object for this exact source, if built before. */
    char *cache = tilec_shell_cache_dir();
    char *cpath = NULL, hex[65] = "";
    if (cache) {
        uint8_t dg[32];
        char why[256];
        tilec_sha256(sm->source, sm->source_len, dg);
        tilec_sha256_hex(dg, hex);
        cpath = tilec_sdk_cache_path(cache, TEMPLATE_NAME "-", hex, ".so");
        /* verified entries only (checksum and key); a bad one is removed */
        if (cpath && tilec_sdk_cache_load(cpath, hex, &sm->binary, &sm->binary_len, why,
                                          sizeof why) != TILEC_SDK_CACHE_HIT) {
            sm->binary = NULL;
        }
    }
    free(cache);
    tilec_pstatus_t st = TILEC_PS_OK;
    if (!sm->binary) {
        st = cc_build(sm->source, sm->source_len, &sm->binary, &sm->binary_len);
        if (st == TILEC_PS_OK && cpath) {
            (void)tilec_sdk_cache_store(cpath, hex, sm->binary, sm->binary_len);
        }
    }
    free(cpath);
    return st == TILEC_PS_OK ? load_so(sm, m) : st;
}

/* ---- launch -------------------------------------------------------------------------- */

typedef struct worker {
    const t_module_t *m;
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

/* The shell has checked the arguments against the kernel and evaluated the
 * grid; l->args are our t_mem_t states. */
static tilec_pstatus_t t_launch(void *dev, tilec_shell_module_t *sm, const tilec_shell_launch_t *l)
{
    (void)dev;
    const t_module_t *mod = sm->data;
    void **ptrs = calloc((size_t)l->nargs + 1, sizeof *ptrs);
    if (!ptrs) {
        return ERR(TILEC_PS_OUT_OF_MEMORY, TEMPLATE_NAME ": launch: out of memory");
    }
    for (uint32_t i = 0; i < l->nargs; i++) {
        ptrs[i] = ((t_mem_t *)l->args[i])->data;
    }
    uint32_t n = mod->nthreads;
    worker_t *w = calloc(n, sizeof *w);
    pthread_t *th = calloc(n, sizeof *th);
    pthread_barrier_t bar;
    if (!w || !th || pthread_barrier_init(&bar, NULL, n) != 0) {
        free(w);
        free(th);
        free(ptrs);
        return ERR(TILEC_PS_OUT_OF_MEMORY, TEMPLATE_NAME ": launch: cannot set up %u threads", n);
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
        w[t].syms = l->syms;
        w[t].bar = &bar;
        memcpy(w[t].grid, l->grid, sizeof l->grid);
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
            st = ERR(TILEC_PS_LAUNCH_ERROR, TEMPLATE_NAME ": launch: cannot start thread %u of %u", t, n);
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

/* ---- the backend description and the query ------------------------------------------------ */

static const tilec_shell_backend_t backend = {
    .name = TEMPLATE_NAME,
    .vendor = "tilec plugin SDK",
    .version = TEMPLATE_VERSION,
    .caps = TEMPLATE_CAPS,
    .abi_max = TEMPLATE_ABI,
    .ir_min = TILEC_IR_MAKE(1, 0),
    .ir_max = TEMPLATE_IR_MAX,
    .mem_size = sizeof(t_mem_t),
    .module_size = sizeof(t_module_t),
    .device_count = t_device_count,
    .device_info = t_device_info,
    .device_property = t_device_property,
    .compile = t_compile,
    .lower = t_lower,
    .module_free = t_module_free,
    .mem_alloc = t_mem_alloc,
    .mem_write = t_mem_write,
    .mem_read = t_mem_read,
    .mem_free = t_mem_free,
    .launch = t_launch,
};

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out);
TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out)
{
    return tilec_shell_query(&backend, host, abi_out, table_out);
}
