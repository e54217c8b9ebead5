/*
 * plugin-sdk/src/lower.c — the lowering driver (tilec/lower.h).
 *
 * Runs the lowering passes in their fixed order over one module, the way
 * Mesa's NIR_PASS does: after each pass the module is verified (a pass that
 * leaves invalid IR is named in the status, not discovered by a backend
 * later), optionally printed and read back byte for byte, and optionally
 * handed to a log callback as text (TILEC_LOG=ir: TileLang's lower trace).
 * The order matters: warp tiling picks the MMA instruction that layout
 * inference distributes; layouts decide which fragments stay on chip in
 * shared memory; pipelines turn shared buffers into rings before the
 * shared-memory plan places them; vector widths read the final layouts;
 * barriers come last, once every access and async copy is known; warp
 * specialization after them (its producer's waits replace the refill's
 * block barrier), after arith so that the earlier passes keep their numbers;
 * persistence (every decision before it is made on the one-tile kernel),
 * then the overlap of an attention loop's second gemm with the next
 * iteration's softmax (it reorders the finished ring), then the turns of
 * its consumer warpgroups at the tensor cores (hints on that schedule),
 * the clusters, and last the launch order of the blocks (the grid as every
 * other pass left it).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"
#include "tilec/ir_verify.h"

typedef struct pass_def {
    const char *name;
    int (*run)(lower_ctx_t *c);
} pass_def_t;

static const pass_def_t passes[TILEC_LOWER_NPASSES] = {
    [TILEC_LOWER_GEMM_WARP] = {"gemm_warp", lower_gemm_warp},
    [TILEC_LOWER_LAYOUT] = {"layout", lower_layout},
    [TILEC_LOWER_PIPELINE] = {"pipeline", lower_pipeline},
    [TILEC_LOWER_SMEM] = {"smem", lower_smem},
    [TILEC_LOWER_VECTOR] = {"vector", lower_vector},
    [TILEC_LOWER_TMA] = {"tma", lower_tma},
    [TILEC_LOWER_BARRIER] = {"barrier", lower_barrier},
    [TILEC_LOWER_ARITH] = {"arith", lower_arith},
    [TILEC_LOWER_WARPSPEC] = {"warpspec", lower_warpspec},
    [TILEC_LOWER_SPLIT] = {"split", lower_split},
    [TILEC_LOWER_PERSIST] = {"persist", lower_persist},
    [TILEC_LOWER_OVERLAP] = {"overlap", lower_overlap},
    [TILEC_LOWER_PINGPONG] = {"pingpong", lower_pingpong},
    [TILEC_LOWER_CLUSTER] = {"cluster", lower_cluster},
    [TILEC_LOWER_ORDER] = {"order", lower_order},
};

const char *tilec_lower_pass_name(int pass)
{
    return pass >= 0 && pass < TILEC_LOWER_NPASSES ? passes[pass].name : NULL;
}

int tilec_lower_pass_from_name(const char *name)
{
    for (int i = 0; name && i < TILEC_LOWER_NPASSES; i++)
        if (strcmp(passes[i].name, name) == 0)
            return i;
    return -1;
}

int lower_fail(lower_ctx_t *c, tilec_lower_code_t code, const char *fmt, ...)
{
    if (c->code != TILEC_LOWER_OK)
        return -1;
    c->code = code;
    int n = snprintf(c->err, c->errlen, "lower: %s: ", c->pass ? c->pass : "driver");
    if (n < 0 || (size_t)n >= c->errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

int lower_oom(lower_ctx_t *c)
{
    return lower_fail(c, TILEC_LOWER_E_NOMEM, "out of memory");
}

int tilec_lower_log_wanted(void)
{
    const char *v = secure_getenv("TILEC_LOG");
    if (!v)
        return 0;
    for (const char *p = v; (p = strstr(p, "ir")) != NULL; p += 2)
        if ((p == v || p[-1] == ',') && (p[2] == 0 || p[2] == ','))
            return 1;
    return 0;
}

void tilec_lower_log_stderr(void *user, const char *pass, const char *text)
{
    (void)user;
    fprintf(stderr, "tilec: ir after %s:\n%s", pass, text);
}

/* print, read back, print again: both texts must be equal */
static int roundtrip(lower_ctx_t *c, const char *text)
{
    tilec_arena_t ar;
    tilec_arena_init(&ar);
    tilec_ir_module_t *m2 = NULL;
    char err[256];
    int rc = 0;
    if (tilec_ir_read(&ar, text, strlen(text), &m2, err, sizeof err) != 0) {
        rc = lower_fail(c, TILEC_LOWER_E_PASS, "round trip: the printed module does not read back: %s",
                        err);
    } else {
        char *again = tilec_ir_print(m2);
        if (!again)
            rc = lower_oom(c);
        else if (strcmp(again, text) != 0)
            rc = lower_fail(c, TILEC_LOWER_E_PASS, "round trip: the module prints differently after "
                                                   "reading it back");
        free(again);
    }
    tilec_arena_destroy(&ar);
    return rc;
}

/* verify, round trip, log: after the input and after each pass */
static int check_point(lower_ctx_t *c, const tilec_lower_options_t *o)
{
    if (!o->no_verify) {
        char err[512];
        if (tilec_ir_verify(c->m, err, sizeof err) != 0)
            return lower_fail(c, c->pass ? TILEC_LOWER_E_PASS : TILEC_LOWER_E_INVALID,
                              "%s: %s", c->pass ? "leaves invalid IR" : "invalid input", err);
    }
    if (!o->roundtrip && !o->log)
        return 0;
    char *text = tilec_ir_print(c->m);
    if (!text)
        return lower_oom(c);
    int rc = o->roundtrip ? roundtrip(c, text) : 0;
    if (rc == 0 && o->log)
        o->log(o->log_user, c->pass ? c->pass : "input", text);
    free(text);
    return rc;
}

static int desc_ok(lower_ctx_t *c)
{
    /* descriptions are const data: one check per thread and description */
    static _Thread_local const tilec_target_desc_t *checked;
    char err[256];
    if (!c->t)
        return lower_fail(c, TILEC_LOWER_E_INVALID, "no target description");
    if (c->t != checked && tilec_target_check(c->t, err, sizeof err) != 0)
        return lower_fail(c, TILEC_LOWER_E_INVALID, "target description: %s", err);
    checked = c->t;
    const tilec_ir_kernel_t *k = c->k;
    int64_t nt = (int64_t)k->threads[0] * k->threads[1] * k->threads[2];
    if (nt < 1 || nt > c->t->max_threads)
        return lower_fail(c, TILEC_LOWER_E_UNSUPPORTED, "threads=%lld per block: the target allows 1..%d",
                          (long long)nt, c->t->max_threads);
    c->nthreads = (int)nt;
    return 0;
}

tilec_lower_code_t tilec_lower_module(tilec_arena_t *a, tilec_ir_module_t *m,
                                      const tilec_target_desc_t *t,
                                      const tilec_lower_options_t *opts,
                                      tilec_lower_status_t *st)
{
    tilec_lower_options_t o;
    memset(&o, 0, sizeof o);
    if (opts)
        memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
    lower_ctx_t c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.m = m;
    c.t = t;
    c.err = st->msg;
    c.errlen = sizeof st->msg;
    st->msg[0] = 0;
    if (!a || !m || !m->kernel) {
        lower_fail(&c, TILEC_LOWER_E_INVALID, "no module");
        return st->code = c.code;
    }
    c.k = m->kernel;
    if (desc_ok(&c) == 0 && check_point(&c, &o) == 0) {
        for (int i = 0; i < TILEC_LOWER_NPASSES; i++) {
            if (o.skip & (1u << i))
                continue;
            c.pass = passes[i].name;
            if (passes[i].run(&c) != 0) {
                if (c.code == TILEC_LOWER_OK)
                    lower_fail(&c, TILEC_LOWER_E_PASS, "failed");
                break;
            }
            if (check_point(&c, &o) != 0)
                break;
        }
    }
    return st->code = c.code;
}

char *tilec_lower_text(const char *ir, size_t len, const tilec_target_desc_t *t,
                       const tilec_lower_options_t *opts, tilec_lower_status_t *st)
{
    tilec_arena_t ar;
    tilec_arena_init(&ar);
    tilec_ir_module_t *m = NULL;
    char *text = NULL;
    char err[256];
    st->code = TILEC_LOWER_OK;
    st->msg[0] = 0;
    if (!ir || tilec_ir_read(&ar, ir, len, &m, err, sizeof err) != 0) {
        st->code = TILEC_LOWER_E_INVALID;
        snprintf(st->msg, sizeof st->msg, "lower: cannot read the module: %s", ir ? err : "no text");
    } else if (tilec_lower_module(&ar, m, t, opts, st) == TILEC_LOWER_OK) {
        text = tilec_ir_print(m);
        if (!text) {
            st->code = TILEC_LOWER_E_NOMEM;
            snprintf(st->msg, sizeof st->msg, "lower: out of memory");
        }
    }
    tilec_arena_destroy(&ar);
    return text;
}
