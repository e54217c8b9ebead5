/*
 * frontend/eval_internal.h — shared state of the frontend evaluator.
 *
 * The evaluator (eval*.c, value.c, builtins.c, tileops.c) walks the syntax
 * tree like a small Python interpreter: module and factory code runs at
 * compile time on compile-time values (ints, floats, strings, tuples,
 * dtypes, buffers, functions), while statements inside `with T.Kernel(...)`
 * append tile-IR statements to the kernel under construction.  A value is
 * either known at compile time or a runtime IR expression (V_EXPR).
 *
 * Errors: the first user error is reported with tilec_diag_error() and the
 * evaluator unwinds to tilec_frontend_compile() with longjmp (ev_fail never
 * returns).  This is safe because every allocation between the two points
 * lives in an arena (the caller's IR arena or the evaluator's scratch arena,
 * destroyed by tilec_frontend_compile), so unwinding leaks nothing.
 * Ownership: values, environments and the syntax tree live in the scratch
 * arena; everything reachable from the IR module lives in the IR arena
 * (strings from the syntax tree are copied there).
 */
#ifndef TILEC_FRONTEND_EVAL_INTERNAL_H
#define TILEC_FRONTEND_EVAL_INTERNAL_H

#include <setjmp.h>
#include <stdint.h>
#include "ast.h"
#include "frontend.h"
#include "nametab.h"

#define EV_MAX_CALL_DEPTH 64       /* macro / function call nesting */
#define EV_MAX_EXPR_DEPTH 1000     /* recursion over expressions and statements */
/* The fuzz build (make fuzz, TILEC_FUZZ_BUDGETS) shrinks the step and memory
 * budgets 20x and 8x: an input that runs into one then costs milliseconds
 * under coverage instrumentation instead of seconds, and the same
 * diagnostics are reached (docs/sanitizers.md). */
#ifdef TILEC_FUZZ_BUDGETS
#define EV_MAX_STEPS 100000L
#else
#define EV_MAX_STEPS 2000000L      /* compile-time statements and loop steps */
#endif
#define EV_MAX_SEQ 1000000         /* elements of a compile-time tuple / string */
#define EV_MAX_ONCHIP_ELEMS (1LL << 26)
#define EV_MAX_IR_DEPTH 1000      /* nesting of one run-time expression */
#define EV_MAX_IR_NODES 200000L   /* nodes of one run-time expression, as a tree */
#define EV_MAX_SCRATCH TILEC_FRONTEND_MAX_BYTES /* bytes of syntax tree and compile-time values */

typedef enum vkind {
    V_NONE = 0, V_BOOL, V_INT, V_FLOAT, V_STR, V_SEQ, V_RANGE, V_DICT,
    V_DTYPE, V_SYM, V_EXPR, V_BUF, V_REGION, V_FUNC, V_BUILTIN, V_NS,
    V_POLICY, V_TENSORTYPE, V_JIT, V_KERNEL, V_LOOPITER,
    V_DEADLOOP,              /* a kernel loop's variable after its loop, or (u.i = 1) a run-time value
                              * before T.sync_grid(): reading it is an error */
    V_OPAQUE,                /* something imported that tilec does not evaluate (modules.c) */
    V_BARRIER,               /* T.alloc_barrier's mbarrier(s): a compile-time token, u.bar (wsops.c) */
    V_WSCOPE,                /* T.ws(k): a warp-specialized region, run by the block (wsops.c) */
    V_CLASS, V_OBJECT,       /* a compile-time class and an instance of one (classes.c) */
    V_REDUCER                /* T.comm_reducer(fn, identity): u.seq = (fn, identity) (lockstep.c) */
} vkind_t;

enum {
    NS_T = 0, NS_TILELANG, NS_POLICY, NS_PASSCFG, NS_MATH, NS_ITERTOOLS, NS_TORCH, NS_TL_MATH,
    NS_AUTOTUNER, NS_CARVER, NS_CARVER_ARCH, NS_DRIVER, NS_TVM, NS_TIRX
};

/* The device host probes see (tilelang.carver.arch.driver.get_num_sms(),
 * torch.cuda.get_device_name() / get_device_capability() / ...): the frontend
 * builds one target-neutral IR for every backend and the interpreter, so it
 * does not see the device the kernel will run on; it answers for one fixed
 * device of the H100/H200 family (modules.c: device_probe). */
#define TILEC_FRONTEND_NUM_SMS 132
#define TILEC_FRONTEND_DEVICE_NAME "NVIDIA H200"
#define TILEC_FRONTEND_DEVICE_CC_MAJOR 9
#define TILEC_FRONTEND_DEVICE_CC_MINOR 0
enum { FN_PLAIN = 0, FN_PRIM, FN_MACRO };

typedef struct value value_t;
typedef struct env env_t;

typedef struct sym {
    const char *name;        /* T.dynamic("name") */
    const char *alias;       /* Python name it was first bound to, or NULL */
    tilec_ir_var_t *var;     /* created on first use in an IR expression */
    tilec_ir_var_t *prev;    /* its var in the previous kernel of a chain (eval_kernel.c) */
    int64_t value;
    int has_value;
    struct sym *next;
} sym_t;

/* A piece of a buffer.  corner: indices only, extents come from the other
 * operand of the tile op (ext[] all 0 until resolved). */
typedef struct region {
    tilec_ir_buffer_t *buf;
    tilec_ir_expr_t **base;  /* [ndim], int32 */
    int64_t *ext;            /* [ndim]; -1 = not a compile-time constant */
    int corner;
} region_t;

typedef struct func {
    ast_stmt_t *def;
    env_t *closure;
    int kind;                /* FN_* */
    value_t **defaults;      /* [nparams], NULL where none (evaluated at def time) */
    int jit;                 /* decorated with tilelang.jit */
    int nout; int64_t *out_idx;
    value_t *pass_configs;   /* tilelang.jit(pass_configs={...}), or NULL */
    ast_loc_t pc_loc;
    struct at_space *tune;   /* @autotune(configs=...) of a factory (autotune.c), or NULL */
    value_t *self;           /* a method bound to an object: passed first (classes.c), or NULL */
} func_t;

typedef struct loopiter {
    tilec_loop_kind_t kind;
    int n;                   /* number of nested loops (T.Parallel) */
    value_t **lo, **hi;      /* [n]; lo may be NULL (0) */
    int64_t step;            /* serial/range only */
    int num_stages;
    value_t *wave, *index;   /* T.Persistent(hi[], wave, index): this block's tiles of the domain hi[] */
} loopiter_t;

struct value {
    vkind_t kind;
    union {
        int64_t i;                                             /* INT, BOOL */
        double f;                                              /* FLOAT */
        struct { const char *s; size_t len; } s;               /* STR */
        struct { int n; value_t **items; int is_list; } seq;   /* SEQ */
        struct { int64_t start, stop, step; } range;           /* RANGE */
        tilec_dtype_t dt;                                      /* DTYPE */
        sym_t *sym;                                            /* SYM */
        tilec_ir_expr_t *ex;                                   /* EXPR */
        tilec_ir_buffer_t *buf;                                /* BUF */
        region_t *rg;                                          /* REGION */
        func_t *fn;                                            /* FUNC */
        struct { int id; value_t *self; const char *meth; } bi; /* BUILTIN */
        int ns;                                                /* NS */
        int policy;                                            /* POLICY */
        struct { value_t *shape; tilec_dtype_t dt; } tt;       /* TENSORTYPE */
        struct { int nout; int64_t *out_idx; value_t *pass_configs; ast_loc_t pc_loc; } jit; /* JIT */
        struct { int ngrid, nogrid; value_t *grid[3]; int threads[3]; } kern; /* KERNEL; nogrid: T.Kernel() */
        loopiter_t *it;                                        /* LOOPITER */
        const char *opq;                                       /* OPAQUE: dotted name */
        struct { const char *name; env_t *attrs; value_t *cls; } obj; /* CLASS (cls NULL), OBJECT */
        struct { int64_t n; int64_t idx; value_t *base; int64_t *counts; } bar; /* BARRIER: n barriers with
                              * counts[n] arrivals a phase; one of them (idx >= 0, base the list; idx -1: a
                              * run-time index, or the whole list when base is NULL) */
    } u;
};

struct env {
    env_t *parent;
    int n, cap;
    const char **names;
    value_t **vals;
    nametab_t tab;           /* name -> index, kept once n passes ENV_LINEAR */
};
#define ENV_LINEAR 8

typedef struct evdef {
    const char *name, *text;
    value_t *val;
    int used;
    int sym;                 /* a T.dynamic symbol took it */
} evdef_t;

/* views.c: a mapped element load and the view element it stands for */
typedef struct vload {
    tilec_ir_expr_t *mapped, *vload;
    struct vload *next;
} vload_t;

typedef struct ev {
    tilec_arena_t *a;          /* IR arena (caller's) */
    size_t a_bytes0;           /* its size when compilation started */
    tilec_arena_t s;           /* scratch arena */
    tilec_diag_t *d;
    jmp_buf jb;
    ast_module_t *mod;
    const char *path;          /* the program's file name (NULL when none) */
    /* sibling files imported (siblings.c); ast_loc_t.file k is sibs[k - 1] */
    struct sib { const char *name, *path, *src; size_t len; env_t *env; int loading; } *sibs;
    int nsibs;
    env_t *genv;
    env_t *env;                /* environment of the running frame */
    int at_module;             /* running module-level statements */
    int ct_loops;              /* enclosing compile-time loops of the frame */
    const char **consts; int nconsts, capconsts; /* module constant names */
    nametab_t consts_tab;      /* the same names, hashed */
    nametab_t taken;           /* names of ev->k's vars and buffers (eval.c: name_taken) */
    tilec_ir_buffer_t **views; int nviews, views_cap; /* views.c: base buffer of view -id-1 */
    vload_t *vloads;           /* views.c: element loads through views */
    const tilec_ir_kernel_t *taken_k; int taken_nv, taken_nb; /* what `taken` holds so far */
    nametab_t suffix;          /* base name -> last N of a base_N made unique (reset with `taken`) */
    tilec_ir_kernel_t *k;
    sym_t *syms, **syms_tail;
    evdef_t *defs; int ndefs;
    /* kernel building */
    int in_prim;               /* evaluating a prim_func body */
    int kernel_done;           /* a T.Kernel was seen */
    tilec_ir_stmt_t **tail;    /* where the next statement goes; NULL outside T.Kernel */
    int rt_depth;              /* enclosing runtime if/for in the current frame */
    int in_rt_loop;            /* inside a runtime loop (break/continue forbidden) */
    /* control flow of the current frame */
    int ctl;                   /* CTL_* */
    value_t *retval;
    int call_depth, depth;
    long steps;
    const char *name_hint;     /* target name of the assignment being evaluated */
    ast_loc_t cur_loc;         /* statement being executed (for errors without a node) */
    const void **mk; int32_t *md; int64_t *ms; size_t mcap, mn; /* expr -> depth, tree size */
    int guarded;               /* inside a run-time if / select: skip loop-range index checks */
    int64_t *loop_ext; int nloop_ext; /* constant extent of loop var by id, -1 unknown */
    uint64_t scalar_mask; int nscalars; /* prim_func parameters that are scalars (eval_kernel.c: scalar_param) */
    /* scalar temporaries by var id: the value of their first assignment and
     * how many assignments they have; slice extents look through those
     * assigned once (value.c: const_diff), checked again when the kernel ends */
    tilec_ir_expr_t **let_def; int *let_nset; int let_cap;
    struct let_use { tilec_ir_var_t *var; ast_loc_t loc; } *let_uses; int nlet_uses, cap_let_uses;
    int eager;                 /* running an eager-style @tilelang.jit kernel (eval_kernel.c: build_eager) */
    int thread_wrap;           /* running per-thread code after a thread index (threads.c) */
    tilec_ir_var_t *thread_vars[3]; /* its loop variables by thread dimension (NULL: one thread) */
    /* several `with T.Kernel` blocks in one prim_func (eval_kernel.c: ev_next_kernel): the tensor
     * parameters' values (V_BUF, pointed at each kernel's own buffer in turn) and the
     * kernels finished so far, with their symbols' -D values in var-id order */
    value_t **kparams; int nkparams, cap_kparams;
    int nscratch;              /* T.alloc_global tensors: the last parameters */
    tilec_ir_kernel_t *stale_k; /* the kernel after a T.sync_grid(), until ev_stale_check */
    struct kdone { tilec_ir_kernel_t *k; int nsyms; int64_t *sym_values; } *kdone; int nkdone, cap_kdone;
    value_t *pass_configs;     /* the entry's tilelang.jit(pass_configs=...), or NULL */
    /* mma_emitter.c: the MMA emitter's hidden block-level tiles of the user's register buffers */
    struct mma_bind {
        const tilec_ir_kernel_t *k; tilec_ir_buffer_t *user, *tile; int role;
    } *mma; int nmma, cap_mma;
    /* rng.c: the kernel's T.rng_init stream (hidden uint64 T.alloc_var scalars) and the
     * T.Parallel nest whose iterations take draws by their linear index */
    struct { const tilec_ir_kernel_t *k; tilec_ir_buffer_t *seed, *seq, *ctr; } rng;
    struct { int active, loop_depth, in_parallel; int64_t draws; tilec_ir_expr_t *lin, *total, *per; } rng_par;
    /* retype.c: dtype-changing re-views of on-chip memory, each a buffer of its own */
    struct retype { const tilec_ir_kernel_t *k; tilec_ir_buffer_t *base, *view; } *retype; int nretype, cap_retype;
    /* lockstep.c: per-thread code whose threads exchange values, one statement at a time */
    struct {
        int on, inloop, pass, threads, nvars0;
        tilec_ir_var_t *tv;            /* the thread index of every per-statement loop */
        tilec_ir_expr_t *dim[3];       /* threadIdx.x/y/z of tv */
        value_t *reducer;              /* the enclosing `with T.attr(T.comm_reducer(...), ...)`, or NULL */
        tilec_ir_stmt_t *loop, **saved_tail;
        struct lkmap { tilec_ir_buffer_t *b, *x; } *map; int nmap, cap; /* per-thread buffer -> [threads, ...] */
    } lk;
    /* wsroles.c: warp roles scheduled at block level */
    struct wr *wr;             /* the running schedule, or NULL */
    int wr_plain;              /* running a role statement the schedule took for barrier-free */
    tilec_ir_buffer_t **tmem; int ntmem, cap_tmem; /* T.alloc_tmem buffers: block-wide, not registers */
    value_t *none, *vtrue, *vfalse;
} ev_t;

enum { CTL_NONE = 0, CTL_RETURN, CTL_BREAK, CTL_CONTINUE };

/* ---- eval.c ---- */
_Noreturn void ev_fail(ev_t *ev, ast_loc_t loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void *ev_alloc(ev_t *ev, size_t n);
void *ev_chk(ev_t *ev, void *p);           /* OOM check for IR constructors */
const char *ev_irstr(ev_t *ev, const char *s);
value_t *ev_eval(ev_t *ev, ast_expr_t *e);
void ev_exec_block(ev_t *ev, const ast_block_t *b);
/* Runs block b as the guarded body of a run-time loop (a counted `while`,
 * a persistent tile loop): its statements go to *then, with the run-time
 * loop depths raised and compile-time loops counted afresh inside. */
void ev_exec_guarded_body(ev_t *ev, const ast_block_t *b, tilec_ir_stmt_t **then);
void ev_exec_stmt(ev_t *ev, ast_stmt_t *s);
void ev_emit(ev_t *ev, tilec_ir_stmt_t *st, ast_loc_t loc);
tilec_ir_stmt_t *ev_stmt(ev_t *ev, tilec_stmt_kind_t kind, ast_loc_t loc);
value_t *ev_call_func(ev_t *ev, func_t *fn, int n, value_t **pos, int nkw, const char **kwn,
                      value_t **kwv, ast_loc_t loc);
const char *ev_unique_var(ev_t *ev, const char *base);
const char *ev_unique_buf(ev_t *ev, const char *base);
void env_set(ev_t *ev, env_t *e, const char *name, value_t *v);
value_t *env_get(env_t *e, const char *name);
void ev_step(ev_t *ev, ast_loc_t loc);
sym_t *ev_new_sym(ev_t *ev, const char *name, ast_loc_t loc);
void ev_set_loop_extent(ev_t *ev, tilec_ir_var_t *v, tilec_ir_expr_t *extent);
int64_t ev_loop_extent(ev_t *ev, const tilec_ir_var_t *v);
/* Eager style: declares the next kernel parameter (an `A: T.Tensor(...)`
 * statement, or `C = T.empty(...)` for an output) and returns its buffer. */
value_t *ev_eager_tensor(ev_t *ev, const char *name, value_t *tt, int is_out, ast_loc_t loc);
/* Scalar temporaries (eval_stmt.c): the expression a let var was first assigned
 * when it has exactly one assignment so far, else NULL; a use of that
 * expression is recorded so that a later second assignment is an error at
 * loc when the kernel ends. */
tilec_ir_expr_t *ev_let_def(ev_t *ev, tilec_ir_var_t *var, ast_loc_t loc);
/* Declares the next tensor parameter of the kernel (a prim_func's, an eager
 * declaration's or a T.alloc_global's) of type tt (V_TENSORTYPE). */
value_t *ev_param_add(ev_t *ev, const char *name, value_t *tt, ast_loc_t loc);
/* At a second `with T.Kernel`: ends ev->k and starts the next kernel of the
 * chain with the same tensor parameters. */
void ev_next_kernel(ev_t *ev, ast_loc_t loc);
/* T.sync_grid(): the rest of the kernel body is the next kernel of the chain. */
void ev_grid_sync(ev_t *ev, ast_loc_t loc);
/* After a T.sync_grid(): its re-declared on-chip buffers are written before they are read. */
void ev_stale_check(ev_t *ev);
/* T.const("M, N"): -D values, else T.dynamic symbols */
value_t *ev_const_names(ev_t *ev, value_t *names, ast_loc_t loc);
env_t *ev_env_new(ev_t *ev, env_t *parent);
evdef_t *ev_find_def(ev_t *ev, const char *name);      /* the -D of name, or NULL */
/* Takes -D d's value for a name whose value in the program is dflt (NULL: none). */
value_t *ev_def_take(ev_t *ev, evdef_t *d, const value_t *dflt);

int ev_env_find(env_t *e, const char *name);          /* slot of name in e, or -1 */
value_t *ev_lookup(ev_t *ev, const char *name, ast_loc_t loc); /* a name's value, or an error */
void ev_sym_define(ev_t *ev, sym_t *s, const char *name, ast_loc_t loc); /* binds s from -D name */
void ev_seq_push(ev_t *ev, value_t ***items, int *n, int *cap, value_t *v, ast_loc_t loc);
void ev_expand_into(ev_t *ev, value_t *v, value_t ***items, int *n, int *cap, ast_loc_t loc); /* *v */

/* ---- eval_stmt.c ---- */
void ev_check_let_uses(ev_t *ev);                      /* at the kernel's end */
int ev_is_prim_decorator(ast_expr_t *d);
void ev_assign_to(ev_t *ev, ast_expr_t *t, value_t *v, ast_loc_t loc);
value_t *ev_make_func(ev_t *ev, ast_stmt_t *s);        /* a def statement's function value */

/* ---- value.c ---- */
value_t *v_new(ev_t *ev, vkind_t k);
value_t *v_int(ev_t *ev, int64_t i);
value_t *v_float(ev_t *ev, double f);
value_t *v_bool(ev_t *ev, int b);
value_t *v_str(ev_t *ev, const char *s, size_t len);
value_t *v_expr(ev_t *ev, tilec_ir_expr_t *e);
value_t *v_seq(ev_t *ev, int n, int is_list);
const char *v_kind_name(const value_t *v);
int v_is_num(const value_t *v);            /* BOOL INT FLOAT */
int v_is_rt(const value_t *v);             /* EXPR, SYM, VAR-scope buffer */
int v_truth(ev_t *ev, value_t *v, ast_loc_t loc);   /* compile-time truthiness */
int64_t v_want_int(ev_t *ev, value_t *v, ast_loc_t loc, const char *what);
tilec_dtype_t v_want_dtype(ev_t *ev, value_t *v, ast_loc_t loc);
int v_as_dtype(const value_t *v, tilec_dtype_t *out);
tilec_ir_expr_t *sym_expr(ev_t *ev, sym_t *s);
tilec_ir_expr_t *ex_of(ev_t *ev, value_t *v, ast_loc_t loc);          /* natural dtype */
tilec_ir_expr_t *ex_as(ev_t *ev, value_t *v, tilec_dtype_t t, ast_loc_t loc); /* cast to t */
tilec_ir_expr_t *ex_cast(ev_t *ev, tilec_ir_expr_t *e, tilec_dtype_t t);
tilec_ir_expr_t *ex_index(ev_t *ev, value_t *v, ast_loc_t loc);       /* int32 index */
tilec_ir_expr_t *ex_bool(ev_t *ev, tilec_ir_expr_t *e);
tilec_ir_expr_t *ex_int32(ev_t *ev, int64_t v);
value_t *v_binop(ev_t *ev, int op, value_t *a, value_t *b, ast_loc_t loc);
value_t *v_compare(ev_t *ev, int op, value_t *a, value_t *b, ast_loc_t loc);
value_t *v_unary(ev_t *ev, int op, value_t *a, ast_loc_t loc);
value_t *v_logic(ev_t *ev, int is_and, value_t *a, value_t *b, ast_loc_t loc); /* runtime */
value_t *v_select(ev_t *ev, value_t *c, value_t *a, value_t *b, ast_loc_t loc);
value_t *v_math(ev_t *ev, tilec_unop_t op, value_t *a, ast_loc_t loc);
value_t *v_minmax(ev_t *ev, int is_max, value_t *a, value_t *b, ast_loc_t loc);
value_t *v_cast(ev_t *ev, value_t *a, tilec_dtype_t t, ast_loc_t loc);
value_t *v_getattr(ev_t *ev, value_t *v, const char *name, ast_loc_t loc);
value_t *v_subscript(ev_t *ev, value_t *v, ast_expr_t *e);
value_t *v_parse_define(ev_t *ev, const char *text, const char **why);
int v_equal(ev_t *ev, value_t *a, value_t *b, int depth);
/* compile-time dicts: V_DICT keeps keys and values alternating in u.seq
 * (n = 2 * pairs), in insertion order */
value_t *v_dict_get(ev_t *ev, value_t *d, value_t *key);   /* NULL when missing */
void v_dict_set(ev_t *ev, value_t *d, value_t *key, value_t *val, ast_loc_t loc);
tilec_dtype_t dt_promote(tilec_dtype_t x, tilec_dtype_t y);

/* ---- builtins.c ---- */
value_t *bi_lookup_ns(ev_t *ev, int ns, const char *name);
value_t *bi_lookup_python(ev_t *ev, const char *name);
value_t *bi_call(ev_t *ev, value_t *fnv, ast_expr_t *call);
value_t *bi_subscript(ev_t *ev, value_t *fnv, ast_expr_t *e);   /* T.Tensor[shape, dtype] */
const char *bi_unsupported_reason(const char *name);  /* a T member tilec rejects, or NULL */
const char *bi_name(int id);
enum { BI_PRIM_FUNC = 1, BI_MACRO, BI_JIT, BI_AUTOTUNE };
/* ids of module functions (modules.c answers calls of ids >= BI_MODULE_FIRST) */
enum {
    BI_MODULE_FIRST = 300,
    BI_M_SQRT = BI_MODULE_FIRST, BI_M_LOG, BI_M_LOG2, BI_M_LOG10, BI_M_EXP, BI_M_POW, BI_M_CEIL, BI_M_FLOOR,
    BI_M_TRUNC, BI_M_FABS, BI_M_GCD, BI_M_LCM, BI_M_ISQRT, BI_M_PROD, BI_M_LOG1P, BI_M_TANH, BI_M_ISCLOSE,
    BI_M_ISINF, BI_M_ISNAN, BI_PRODUCT, BI_NEXT_POW2, BI_NUM_SMS, BI_TIRX_CONST,
    BI_IDENTITY_DEC, BI_REQUIRES_PKG, BI_FP8_TYPE, BI_IKET_MARK, BI_IKET_RANGE, BI_IKET_PAYLOAD,
    BI_DEV_AVAILABLE, BI_DEV_NAME, BI_DEV_CAP, BI_DEV_PROPS, BI_DEV_COUNT, BI_DEV_CURRENT, BI_MMA_NEW,
    BI_SP_E_FACTOR, BI_SP_E_REPL
};
/* ids of the Python builtins and methods of pyfuncs.c (>= BI_PY_FIRST) */
enum {
    BI_PY_FIRST = 400,
    BI_ENUMERATE = BI_PY_FIRST, BI_ZIP, BI_SUM, BI_ANY, BI_ALL, BI_SORTED, BI_REVERSED, BI_DICT, BI_DIVMOD,
    BI_ROUND, BI_PPOW, BI_GETATTR, BI_HASATTR, BI_REPR, BI_FORMAT, BI_PPRINT, BI_MAP, BI_FILTER, BI_CALLABLE,
    BI_METHOD                /* a method bound to bi.self, named bi.meth */
};
/* ids of the Hopper/Blackwell objects of wsops.c (>= BI_WS_FIRST) */
enum {
    BI_WS_FIRST = 500,
    BI_WS = BI_WS_FIRST, BI_ALLOC_BARRIER, BI_BARRIER_ARRIVE, BI_MBARRIER_ARRIVE, BI_BARRIER_WAIT,
    BI_MBARRIER_WAIT, BI_MBARRIER_EXPECT_TX, BI_FENCE_ASYNC, BI_TMA_STORE_WAIT, BI_TMA_COPY, BI_ALLOC_TMEM,
    BI_TCGEN05_GEMM, BI_WGMMA_GEMM, BI_WAIT_WGMMA, BI_CP_ASYNC_BAR, BI_ACCESS_PTR, BI_PTX_CP_ASYNC,
    BI_TCGEN05_ARRIVE, BI_PTX_COMMIT, BI_PTX_WAIT
};
/* methods of the MMA emitter object of mma_emitter.c (>= BI_MMA_FIRST) */
enum { BI_MMA_FIRST = 600, BI_MMA_LDA = BI_MMA_FIRST, BI_MMA_LDB, BI_MMA_MMA, BI_MMA_STMATRIX };
/* methods of the persistent tile scheduler of tilesched.c (>= BI_TS_FIRST) */
enum { BI_TS_FIRST = 700, BI_TS_INIT = BI_TS_FIRST, BI_TS_VALID, BI_TS_NEXT, BI_TS_COORD };
/* the items of a compile-time iterable (tuple, list, range, str, dict keys) as a tuple */
value_t *v_iter_items(ev_t *ev, value_t *v, ast_loc_t loc);

/* argument lists of calls */
typedef struct args {
    int n; value_t **v; ast_loc_t *loc;
    int nkw; const char **kwn; value_t **kwv; ast_loc_t *kwloc;
    ast_loc_t at;
} args_t;
void ev_eval_args(ev_t *ev, ast_expr_t *call, args_t *out);
/* Binds a call's arguments to names[] (the first nreq required; unknown
 * keywords are errors): BIND("T.f", 1, "a", "b") declares a_[] and l_[]. */
void bi_bind(ev_t *ev, args_t *ar, const char *fname, const char *const *names, int nnames, int nreq,
             value_t **out, ast_loc_t *locs);
#define BIND(fname, req, ...)                                                        \
    static const char *const names_[] = {__VA_ARGS__};                              \
    enum { NN_ = sizeof names_ / sizeof names_[0] };                                \
    value_t *a_[NN_];                                                               \
    ast_loc_t l_[NN_];                                                              \
    bi_bind(ev, &ar, fname, names_, NN_, req, a_, l_)

/* ---- rng.c ---- */
value_t *rng_init(ev_t *ev, args_t *a, ast_loc_t at);   /* T.rng_init(seed, seq=None, off=0) */
value_t *rng_rand(ev_t *ev, args_t *a, ast_loc_t at);   /* T.rng_rand(): uint32 */
int rng_parallel_begin(ev_t *ev, tilec_ir_var_t *const *vars, tilec_ir_expr_t *const *ext, int n);
/* begin: 1 when this nest takes the stream's draws by iteration (end it after its loop statement) */
void rng_parallel_end(ev_t *ev, ast_loc_t loc);

/* ---- lockstep.c ---- */
int lk_needed(ev_t *ev, const ast_block_t *b, int first);  /* b->s[first..] exchanges values between threads */
void lk_run(ev_t *ev, const ast_block_t *b, int first);  /* b->s[first] a thread binding: the rest, lock-step */
void lk_stmt(ev_t *ev, ast_stmt_t *s);                      /* one statement of lock-step code */
tilec_ir_expr_t *lk_load(ev_t *ev, tilec_ir_buffer_t *b, tilec_ir_expr_t **idx); /* an element, per thread */
void lk_uniform(ev_t *ev, const tilec_ir_expr_t *e, ast_loc_t loc, const char *what);
value_t *lk_shuffle(ev_t *ev, int kind, args_t *ar, const char *what);
value_t *lk_allreduce(ev_t *ev, args_t *ar);                /* T.tvm_thread_allreduce(1, v, True, dst, t...) */
int lk_fill_local(ev_t *ev, value_t *dst, value_t *val, ast_loc_t loc); /* per-thread T.fill of a local buffer */
int th_rebind(ev_t *ev, ast_stmt_t *s); /* a binding statement in lock-step code: its name = that dimension's index */

/* ---- retype.c ---- */
tilec_ir_buffer_t *retype_new(ev_t *ev, tilec_ir_buffer_t *base, const int64_t *dims, int nd, tilec_dtype_t t,
                              ast_loc_t loc, const char *what);   /* the view's own buffer */
void retype_check(ev_t *ev);   /* at a kernel's end: no read sees the other dtype's bits */

/* ---- views.c ---- */
int view_is(const tilec_ir_buffer_t *b);               /* a re-view record (never in the kernel) */
value_t *view_new(ev_t *ev, value_t *src, value_t *shape, value_t *dtype, ast_loc_t loc, const char *what);
value_t *view_element(ev_t *ev, tilec_ir_expr_t *vload); /* view[i, ...] read through its base */
tilec_ir_expr_t *view_corner_of(ev_t *ev, const tilec_ir_expr_t *load); /* the view load a mapped load is */
void view_reject(ev_t *ev, const tilec_ir_buffer_t *b, ast_loc_t loc, const char *op);
void view_copy(ev_t *ev, region_t *s, region_t *d, ast_loc_t loc);
value_t *view_src(ev_t *ev, value_t *v, ast_loc_t loc); /* a whole view read: an on-chip copy of it */
void op_im2col(ev_t *ev, value_t **v, ast_loc_t *l, ast_loc_t loc);
/* value.c: the range of an index over its enclosing loops */
int v_index_range(ev_t *ev, tilec_ir_expr_t *e, int64_t *lo, int64_t *hi);
/* subscript.c: two int expressions the same tree; e loads an element of b */
int ev_ex_same(const tilec_ir_expr_t *x, const tilec_ir_expr_t *y);
int ev_ex_reads(const tilec_ir_expr_t *e, const tilec_ir_buffer_t *b);

/* ---- reinterpret.c ---- */
value_t *v_reinterpret(ev_t *ev, value_t *x, tilec_dtype_t to, ast_loc_t loc); /* x's bits as dtype to */

/* ---- mma_emitter.c ---- */
value_t *mma_new(ev_t *ev, args_t *ar);                          /* TensorCoreIntrinEmitter(...) */
value_t *mma_call(ev_t *ev, int id, value_t *self, args_t *ar);   /* its ldmatrix_a/_b, mma, stmatrix */
void mma_check(ev_t *ev);   /* at a kernel's end: the register buffers it took are not used otherwise */

/* ---- tilesched.c ---- */
int ts_is(const value_t *v);                                       /* a T.PersistentTileScheduler */
value_t *ts_new(ev_t *ev, args_t *ar);                             /* T.PersistentTileScheduler(...) */
value_t *ts_call(ev_t *ev, int id, value_t *self, args_t *ar);     /* its init, valid, next_tile, coord */
int ts_is_valid_syntax(const ast_expr_t *c);                       /* c is `X.valid()` */
value_t *ts_of_while(ev_t *ev, const ast_stmt_t *s);               /* `while sched.valid():`'s scheduler */
ast_block_t ts_body(ev_t *ev, const ast_stmt_t *s);                /* its body less the final next_tile() */
int64_t ts_waves(ev_t *ev, value_t *o);                            /* the loop's bound: ceildiv(tiles, W) */
value_t *ts_valid_at(ev_t *ev, value_t *o, value_t *it, ast_loc_t loc); /* valid() at iteration it */
void ts_bind(ev_t *ev, value_t *o, value_t *it, ast_loc_t loc);    /* the state at iteration it */
void ts_loop_check(ev_t *ev, value_t *o, ast_loc_t loc);          /* a loop may start: after init, once */
void ts_loop_begin(ev_t *ev, value_t *o, value_t *it, ast_loc_t loc);
void ts_unbind(ev_t *ev, value_t *o);                              /* after the loop */
void ts_exec_while(ev_t *ev, ast_stmt_t *s, value_t *o);           /* the loop outside warp roles */

/* ---- classes.c ---- */
void cls_exec(ev_t *ev, ast_stmt_t *s);                 /* a class statement */
value_t *cls_call(ev_t *ev, value_t *c, args_t *ar);     /* C(...): a new object, __init__ run */
value_t *cls_getattr(ev_t *ev, value_t *v, const char *name, ast_loc_t loc);
void cls_setattr(ev_t *ev, value_t *v, const char *name, value_t *val, ast_loc_t loc);

/* ---- threads.c ---- */
int th_is_binding(const ast_stmt_t *s);               /* `tx = T.get_thread_binding(...)` and the like */
/* b->s[first] is a binding whose name the rest of b does not use, or only hands to the MMA emitter
 * (thread_bindings=tx): checked, bound to None, and 1 (the block stays block-level) */
int th_skip_unused(ev_t *ev, const ast_block_t *b, int first);
int th_uses_e(const char *name, const ast_expr_t *e);   /* uses of name in e (threads.c) */
int th_uses_s(const char *name, const ast_stmt_t *s);
int th_binding_dim(ev_t *ev, const ast_stmt_t *s, value_t **lo); /* a binding statement's dimension and start */
void th_exec_rest(ev_t *ev, const ast_block_t *b, int first); /* b->s[first..] once per thread */
void th_reject(ev_t *ev, const char *what, ast_loc_t loc); /* what may not run in per-thread code */

/* ---- wsroles.c ---- */
int wr_applies(ev_t *ev, const ast_block_t *b, int first); /* b->s[first] a binding read only by role `if`s */
void wr_run(ev_t *ev, const ast_block_t *b, int first);     /* the rest, the roles in a barrier-true order */
env_t *wr_scope_of(ev_t *ev, const char *name);             /* where an assignment in a role binds name */
int wr_is_bar_call(const ast_expr_t *call);                  /* a call of an mbarrier operation */
const char *wr_call_name(const ast_expr_t *call);            /* the called attribute or name, or NULL */
/* ---- wsthread.c ---- */
void wr_per_thread(ev_t *ev, const char *tx, int lo, int n, ast_stmt_t *s); /* s for threads lo..lo+n-1 */

/* ---- wsops.c ---- */
value_t *ws_member(ev_t *ev, const char *name);       /* T.ws, T.alloc_barrier, ...; NULL when not one */
const char *ws_name(int id);
value_t *ws_call(ev_t *ev, int id, args_t *ar);

/* ---- pystr.c ---- */
value_t *v_to_str(ev_t *ev, value_t *v, int repr, ast_loc_t loc);      /* str(v) / repr(v) */
value_t *v_format(ev_t *ev, value_t *v, const char *spec, ast_loc_t loc); /* format(v, spec) */
value_t *v_fstring(ev_t *ev, ast_expr_t *e);

/* ---- pyfuncs.c ---- */
value_t *py_lookup(ev_t *ev, const char *name);           /* NULL when not one of its builtins */
const char *py_name(int id);
value_t *py_call(ev_t *ev, int id, args_t *ar);
value_t *py_method(ev_t *ev, value_t *self, const char *name); /* bound method, NULL when none */
value_t *py_method_call(ev_t *ev, value_t *self, const char *name, args_t *ar);

/* ---- modules.c ---- */
value_t *mod_opaque(ev_t *ev, const char *path);
value_t *mod_lookup(ev_t *ev, const char *path);       /* `import path`: a namespace or an opaque value */
value_t *mod_member(ev_t *ev, int ns, const char *name); /* NULL when missing */
const char *mod_ns_name(int ns);
value_t *mod_call(ev_t *ev, int id, args_t *ar);

/* ---- tileops.c ---- */
region_t *rg_of(ev_t *ev, value_t *v, ast_loc_t loc, const char *what);
void op_copy(ev_t *ev, value_t *src, value_t *dst, ast_loc_t loc, ast_loc_t sloc, ast_loc_t dloc);
int op_copy_is_own(const value_t *v);   /* a T.alloc_local / T.alloc_var operand (per-thread copies) */
void op_fill(ev_t *ev, value_t *dst, value_t *val, ast_loc_t loc);
void op_gemm(ev_t *ev, value_t **v, ast_loc_t *locs, ast_loc_t loc);
void op_reduce(ev_t *ev, tilec_reduce_op_t op, value_t **v, ast_loc_t *locs, ast_loc_t loc);
void op_cumsum(ev_t *ev, value_t **v, ast_loc_t *locs, ast_loc_t loc);
void op_atomic(ev_t *ev, tilec_atomic_op_t op, value_t *dst, value_t *val, ast_loc_t loc,
               ast_loc_t dloc);
void op_atomic_vec(ev_t *ev, value_t *dst, value_t *val, int width, ast_loc_t loc, ast_loc_t dloc,
                   ast_loc_t vloc);
void op_print(ev_t *ev, value_t *v, const char *msg, ast_loc_t loc);
value_t *op_alloc(ev_t *ev, tilec_scope_t scope, value_t *shape, value_t *dt, value_t *init,
                  const char *name, ast_loc_t loc);
void ev_require_kernel(ev_t *ev, ast_loc_t loc, const char *what);

/* ---- siblings.c ---- */
/* `from from import name` of a sibling file from.py: the value, or NULL when from is no sibling file */
value_t *sib_import(ev_t *ev, const char *from, const char *name, ast_loc_t loc);

/* ---- sparse.c ---- */
void op_gemm_sp(ev_t *ev, value_t **v, ast_loc_t *locs, ast_loc_t loc);  /* T.gemm_sp: decompress, T.gemm */
value_t *sp_call(ev_t *ev, int id, args_t *ar);   /* get_e_factor, get_e_replicate_factor */

#endif
