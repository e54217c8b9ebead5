/*
 * tilec/lower.h — the SDK's lowering driver: high-level tile IR to lowered
 * tile IR (IR 1.1) for one target description (docs/lowering.md).
 *
 * tilec_lower_module runs the lowering passes in a fixed order over a
 * module in place: warp tiling of T.gemm, layout inference, pipelines,
 * the shared-memory plan, vector widths, tensor-copy rings on mbarriers,
 * barrier insertion, divisions by row values as reciprocals.  Each pass is
 * one file (plugin-sdk/src/lower_*.c) and reads only the target
 * description.  After every pass the module is verified (tilec_ir_verify),
 * optionally printed and read back (round trip) and optionally handed to a
 * log callback as text, so a wrong pass is caught at the pass that broke
 * it.  What the passes decide is IR: attributes (lower.*), buffer layouts,
 * async copies and barriers, all printable, verifiable and interpretable.
 */
#ifndef TILEC_LOWER_H
#define TILEC_LOWER_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/shell.h"
#include "tilec/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tilec_lower_code {
    TILEC_LOWER_OK = 0,
    TILEC_LOWER_E_INVALID,      /* the input module or the description is invalid */
    TILEC_LOWER_E_UNSUPPORTED,  /* the target cannot hold the kernel (shared memory, threads) */
    TILEC_LOWER_E_PASS,         /* a pass produced IR the verifier rejects: a bug */
    TILEC_LOWER_E_NOMEM
} tilec_lower_code_t;

typedef struct tilec_lower_status {
    tilec_lower_code_t code;
    char msg[512];              /* "" when OK; else "lower: PASS: why" */
} tilec_lower_status_t;

/* The passes, in the order they run; bits of tilec_lower_options_t.skip. */
typedef enum tilec_lower_pass {
    TILEC_LOWER_GEMM_WARP = 0,  /* lower_gemm_warp.c */
    TILEC_LOWER_LAYOUT,         /* lower_layout.c */
    TILEC_LOWER_PIPELINE,       /* lower_pipeline.c */
    TILEC_LOWER_SMEM,           /* lower_smem.c */
    TILEC_LOWER_VECTOR,         /* lower_vector.c */
    TILEC_LOWER_TMA,            /* lower_tma.c */
    TILEC_LOWER_BARRIER,        /* lower_barrier.c */
    TILEC_LOWER_ARITH,          /* lower_arith.c */
    TILEC_LOWER_WARPSPEC,       /* lower_warpspec.c (after arith: the pass numbers stay) */
    TILEC_LOWER_SPLIT,          /* lower_split.c (the barriers placed before still hold) */
    TILEC_LOWER_PERSIST,        /* lower_persist.c (the tile loop of a persistent kernel) */
    TILEC_LOWER_OVERLAP,        /* lower_overlap.c (an attention loop's second gemm under the next softmax) */
    TILEC_LOWER_PINGPONG,       /* lower_pingpong.c (its consumer warpgroups take turns at the gemms) */
    TILEC_LOWER_CLUSTER,        /* lower_cluster.c (2-block clusters sharing one operand's tiles) */
    TILEC_LOWER_ORDER,          /* lower_order.c (last: the heaviest blocks of a growing grid first) */
    TILEC_LOWER_NPASSES
} tilec_lower_pass_t;

/* "gemm_warp" "layout" ...; NULL when out of range. */
const char *tilec_lower_pass_name(int pass);
/* pass number of a name, -1 when unknown */
int tilec_lower_pass_from_name(const char *name);

typedef struct tilec_lower_options {
    uint32_t struct_size;       /* sizeof(tilec_lower_options_t) */
    uint32_t skip;              /* (1u << pass) bits: passes to leave out */
    int no_verify;              /* 1: do not verify after every pass (the default verifies) */
    int roundtrip;              /* 1: print and read back after every pass, byte-compared */
    /* called with the module's text after every pass (and "input" first);
     * NULL: no log.  tilec_lower_log_wanted() says whether TILEC_LOG asks. */
    void (*log)(void *user, const char *pass, const char *text);
    void *log_user;
} tilec_lower_options_t;

/* Lowers m in place for target t; new nodes come from a.  opts may be
 * NULL (defaults).  Returns st->code; st->msg says why. */
tilec_lower_code_t tilec_lower_module(tilec_arena_t *a, tilec_ir_module_t *m,
                                      const tilec_target_desc_t *t,
                                      const tilec_lower_options_t *opts,
                                      tilec_lower_status_t *st);

/* 1 when the environment's TILEC_LOG names "ir". */
int tilec_lower_log_wanted(void);
/* A log callback that writes "tilec: ir after PASS:\n<text>" to stderr. */
void tilec_lower_log_stderr(void *user, const char *pass, const char *text);

/* Reads .tir text, lowers it for t and prints the result: the whole of
 * `--emit lowered` for a plugin.  Returns a malloc'd text (caller frees)
 * or NULL with st set. */
char *tilec_lower_text(const char *ir, size_t len, const tilec_target_desc_t *t,
                       const tilec_lower_options_t *opts, tilec_lower_status_t *st);

/* The whole of a plugin's lower entry (--emit lowered, lower_plugin.c):
 * reads ir, lowers it for t (NULL: the arch has no description), returns
 * the printed module (malloc'd, *out_len its length) or NULL with *st the
 * ABI status and the SDK's last error "NAME: lower: why".  When TILEC_LOG
 * names "ir", log(log_user, "ir", text) gets the module after every pass
 * (log may be NULL: no trace). */
char *tilec_lower_plugin_text(const char *name, const char *ir, size_t len, const tilec_target_desc_t *t,
                              void (*log)(void *, const char *, const char *), void *log_user,
                              size_t *out_len, tilec_pstatus_t *st);
/* The same as a plugin shell's lower hook: fills mod->lowered (and
 * lowered_len) from mod->ir_text, tracing through tilec_shell_log. */
tilec_pstatus_t tilec_lower_shell(const char *name, const tilec_target_desc_t *t, tilec_shell_module_t *mod);

/* The module a SIMT plugin's compile prints (tilec/simt.h): mod->ir_text
 * read into arena a and lowered for t, tracing like tilec_lower_shell; a
 * module that already has layouts (a lowered .tir) is mod->ir itself.
 * NULL with *st and the SDK's last error "NAME: lower: why". */
const tilec_ir_module_t *tilec_lower_shell_module(const char *name, const tilec_target_desc_t *t,
                                                  const tilec_shell_module_t *mod, tilec_arena_t *a,
                                                  tilec_pstatus_t *st);

/* How statement s (with what it nests: bodies, branches, expressions)
 * uses buffer b: TILEC_LOWER_USE_READ | TILEC_LOWER_USE_WRITE bits, 0 not
 * at all (a nest too deep counts as both).  For dialect hooks that need
 * the lowering's access analysis. */
#define TILEC_LOWER_USE_READ 1
#define TILEC_LOWER_USE_WRITE 2
int tilec_lower_uses(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b);

/* An SVG picture of buffer b's layout (layout_svg.c): a register fragment's
 * thread/register map, a shared buffer's addresses and banks, over its last
 * two dimensions.  0 with *svg malloc'd, or -1 (no layout, symbolic shape). */
int tilec_layout_svg(const tilec_ir_buffer_t *b, char **svg);
/* One DIR/NAME.svg per buffer of m that has a layout (--emit layout -o DIR);
 * *nfiles counts them.  0, or -1 with a message in err. */
int tilec_layout_svg_dir(const tilec_ir_module_t *m, const char *dir, int *nfiles, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
