/*
 * tilec/simt.h — the SIMT lowering kit: tile IR to the source of one kernel
 * in a C-family GPU dialect (OpenCL C, CUDA C++, HIP, ...).
 *
 * A backend fills a tilec_simt_dialect_t (type names, address-space
 * qualifiers, the kernel signature pieces, index expressions, barrier,
 * atomics, how 16-bit floats are loaded and stored, math names) and calls
 * tilec_simt_generate on a parsed module.  It gets back the kernel source,
 * the number of bytes of block-wide (shared/local) memory the kernel
 * declares, and the features it uses, so the backend can check device
 * limits and capabilities before compiling.  docs/simt-kit.md describes the
 * lowering (block = work-group of `threads` work-items, block-level scalar
 * code run uniformly by every thread, side effects by thread 0, T.Parallel
 * and tile ops distributed over the threads, barrier placement) and every
 * dialect field.
 *
 * Compatibility: the dialect and result structs start with struct_size and
 * only grow at the end; a field a caller's struct_size does not cover reads
 * as zero/NULL (its documented default).  Templates are strings with `$x`
 * placeholders, listed for each field; `$$` is a literal `$`.
 *
 * Generated names never come from the program: buffer i is b<i>, variable i
 * is v<i>, the linear thread index is tc_tid, the kernel is named by
 * dialect->kernel_name.  Kernel arguments are the tensor parameters in
 * kernel order, then one int64 value per T.dynamic symbol in kernel variable
 * order (the order of tilec_plaunch_t.syms).
 */
#ifndef TILEC_SIMT_H
#define TILEC_SIMT_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/ir.h"
#include "tilec/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a 16-bit float dtype (float16, bfloat16) is represented. */
typedef enum tilec_simt_half_mode {
    /* Storage is the 16-bit unsigned integer type of the dialect
     * (type_name[TILEC_UINT16]); the kit converts to and from float in
     * software (round to nearest even) through the bit-cast functions
     * f32_as_bits/bits_as_f32.  Works everywhere; the default. */
    TILEC_SIMT_HALF_BITS = 0,
    /* Global tensors are pointers to half_type and are read and written with
     * the half_load/half_store templates (OpenCL vload_half/vstore_half_rte
     * without cl_khr_fp16); on-chip buffers hold 16-bit patterns and go
     * through the same templates with their pointer cast to half_type *
     * (qualified by shared_ptr_qual or private_qual). */
    TILEC_SIMT_HALF_FUNCS = 1,
    /* half_type is a native type everywhere (OpenCL half with cl_khr_fp16,
     * CUDA __half): values convert with half_to_float/half_from_float (or
     * C casts when those are NULL).  Arithmetic still happens in float. */
    TILEC_SIMT_HALF_NATIVE = 2
} tilec_simt_half_mode_t;

typedef struct tilec_simt_half {
    tilec_simt_half_mode_t mode;
    const char *half_type;      /* FUNCS/NATIVE: "half", "__half", "__nv_bfloat16" */
    const char *half_load;      /* FUNCS: template, $p pointer, $o element offset: "vload_half($o, $p)" */
    const char *half_store;     /* FUNCS: template, $v float value: "vstore_half_rte($v, $o, $p)" */
    const char *half_to_float;  /* NATIVE: function name, NULL: C cast */
    const char *half_from_float;/* NATIVE: function name (must round to nearest even), NULL: C cast */
} tilec_simt_half_t;

typedef struct tilec_simt_ctx tilec_simt_ctx_t;

/* Optional per-statement override.  Called for every statement before the
 * kit lowers it; return 1 when the hook emitted the statement itself (the
 * kit still places the barriers the statement needs, before and after, as
 * for its own lowering), 0 to let the kit lower it, -1 on error (after
 * tilec_simt_fail).  A hook may use the tilec_simt_* context functions
 * below. */
typedef int (*tilec_simt_stmt_hook_fn)(void *user, tilec_simt_ctx_t *ctx, const tilec_ir_stmt_t *s);
/* Optional prelude hook, called after the kernel body is generated (so
 * tilec_simt_uses() is final); text it emits with tilec_simt_emit goes
 * first in the source (e.g. "#pragma OPENCL EXTENSION cl_khr_fp64 : enable"). */
typedef int (*tilec_simt_prelude_hook_fn)(void *user, tilec_simt_ctx_t *ctx);

/* Placement of a block-wide buffer (hook for smarter fragment layouts). */
typedef enum tilec_simt_place {
    TILEC_SIMT_PLACE_SHARED = 0,  /* block-wide memory (v1: every SHARED and FRAGMENT buffer) */
    TILEC_SIMT_PLACE_PRIVATE = 1  /* per-thread (v1: LOCAL and VAR buffers) */
} tilec_simt_place_t;

typedef struct tilec_simt_dialect {
    uint32_t struct_size;
    uint32_t reserved;
    const char *name;            /* "opencl", for comments and messages */

    /* Storage type names per dtype ("uchar" for bool, "char", "short", "int",
     * "long", "uchar", "ushort", "uint", "ulong", float16/bfloat16: see half
     * modes (a BITS entry may be NULL: type_name[TILEC_UINT16] is used),
     * "float", "double").  Computation uses type_name[TILEC_INT32] for bool
     * and type_name[TILEC_FLOAT32] for 16-bit floats. */
    const char *type_name[TILEC_DTYPE_COUNT];
    tilec_simt_half_t f16, bf16;  /* bf16 NATIVE/FUNCS need matching names */
    const char *int64_suffix;    /* literal suffix: "L" (OpenCL), "LL" (CUDA); NULL "LL" */
    const char *uint64_suffix;   /* "UL", "ULL"; NULL "ULL" */
    /* Bit casts, function names: float<->uint32, double<->uint64. */
    const char *f32_as_bits, *bits_as_f32;   /* "as_uint", "as_float" / "__float_as_uint", "__uint_as_float" */
    const char *f64_as_bits, *bits_as_f64;   /* "as_ulong", "as_double" / "__double_as_longlong" ... */

    /* Qualifiers. */
    const char *func_qual;       /* before helper functions: "inline" / "__device__ __forceinline__"; NULL "" */
    const char *global_qual;     /* pointer address space of global memory: "__global" / "" */
    const char *shared_qual;     /* block-wide array declaration: "__local" / "__shared__" */
    const char *private_qual;    /* per-thread arrays: "" / "__private"; NULL "" */
    const char *restrict_kw;     /* "restrict" / "__restrict__"; NULL none */

    /* Kernel signature: KERNEL_QUAL [ATTR] NAME(PARAMS): tensor params
     * "GQ T *RESTRICT b<i>" then symbols "SYMTYPE tc_sym<j>". */
    const char *kernel_qual;     /* "__kernel void" / "extern \"C\" __global__ void" */
    const char *kernel_attr;     /* template, NULL none: $x $y $z threads per dim, $n total;
                                    "__attribute__((reqd_work_group_size($x, $y, $z)))" /
                                    "__launch_bounds__($n)" */
    const char *kernel_name;     /* NULL "tilec_kernel" */
    const char *sym_type;        /* NULL type_name[TILEC_INT64] */

    /* Index expressions, per dimension 0..2. */
    const char *block_idx[3];    /* "get_group_id(0)" / "blockIdx.x" */
    const char *thread_idx[3];   /* "get_local_id(0)" / "threadIdx.x" */

    /* Barrier statement for the block, with a fence on block-wide and
     * global memory: "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"
     * / "__syncthreads();". */
    const char *barrier;

    /* Native atomics: atomic[dtype][op] is a statement template, NULL when
     * the device has none (the kit then emits a compare-and-swap loop).
     * $p the address (a pointer to the storage type in the right address
     * space), $v the value (storage type), $a the address space qualifier.
     * e.g. OpenCL int32 add: "atomic_add($p, $v);". */
    const char *atomic[TILEC_DTYPE_COUNT][3];
    /* Compare-and-swap expressions giving the old value: $p the address of
     * a 32-bit (64-bit) word cast by the kit to "volatile $a UINT32 *",
     * $c the expected bits, $v the new bits.  cas32 is required for any
     * non-native atomic; cas64 for 64-bit ones (NULL: those fail with an
     * "unsupported" message).  "atomic_cmpxchg($p, $c, $v)" /
     * "atomicCAS($p, $c, $v)". */
    const char *cas32, *cas64;

    /* Math: when math_generic is set the overloaded names are used for
     * both float and double (exp, exp2, log, log2, sqrt, rsqrt, tanh,
     * floor, ceil, fabs, pow, fmod) as in OpenCL C and CUDA C++; otherwise
     * the C names with an f suffix for float (expf ...), and rsqrt becomes
     * 1/sqrt. */
    int math_generic;
    int has_rsqrt;               /* rsqrt() exists (OpenCL, CUDA) */

    /* printf: statement T.print lowers to printf when set, else to nothing
     * (and TILEC_SIMT_USES_PRINT is still reported). */
    int has_printf;

    /* Hooks (optional). */
    void *user;
    tilec_simt_stmt_hook_fn stmt_hook;
    tilec_simt_prelude_hook_fn prelude_hook;
    const char *extra_prelude;   /* text placed after the hook's prelude, before the kit's helpers */

    /* Alignment in bytes of block-wide arrays (16 when 0), written as
     * __attribute__((aligned(N))) after the array declarator. */
    uint32_t shared_align;
    /* printf conversion for a value of type type_name[TILEC_INT64]:
     * "%ld" (OpenCL long), NULL "%lld". */
    const char *printf_i64;
    /* Address-space qualifier in pointer types to block-wide memory (the
     * casts of atomics, the pointers below): NULL means shared_qual
     * (OpenCL "__local"); CUDA/HIP set "" (generic pointers). */
    const char *shared_ptr_qual;
    /* NULL: block-wide buffers are static arrays.  Otherwise a template
     * declaring one dynamically sized block-wide byte array named $n, e.g.
     * "extern __shared__ __align__(16) unsigned char $n[];" (CUDA, for more
     * than 48 KiB with cuFuncSetAttribute); every block-wide buffer is then
     * a pointer into it at a shared_align-aligned offset, and
     * tilec_simt_result_t.shared_bytes is the size to launch with. */
    const char *shared_dynamic_decl;
    /* Vector copies (optional; vec_width 0 or a NULL template: every copy
     * moves one element at a time, as before).  vec_width is the widest
     * vector in elements the dialect offers (2, 4, 8 or 16); a COPY between
     * two non-private buffers (global <-> shared/fragment, or shared <->
     * shared) of the same dtype and storage type (not bool), run
     * cooperatively at block level, moves W elements at a time, W the
     * largest power of two <= vec_width with W * element size <=
     * shared_align, when the innermost extent of both regions is a multiple
     * of W and no constant shape or base rules it out.  The vector loop runs
     * only when, at run time, both global regions lie wholly inside their
     * tensors and the flattened element offset of every row start is a
     * multiple of W on both sides (innermost dimension and base of the
     * innermost dimension divisible by W); otherwise the scalar,
     * bounds-checked loop runs.  So every vector access is at an element
     * offset that is a multiple of W from the start of its buffer
     * (block-wide arrays are shared_align-aligned; a dialect using typed
     * vector pointers relies on its allocator aligning global tensors).
     * Templates: $n W, $t the storage type of the buffer, $p a pointer to
     * the first element (e.g. "(b0 + off)"), $v the vector value.
     * vec_load is an expression: "vload$n(0, $p)" (OpenCL, element
     * alignment suffices) / "*(const $t$n *)($p)" (CUDA); vec_store a
     * statement: "vstore$n($v, 0, $p);" / "*($t$n *)($p) = $v;". */
    uint32_t vec_width;
    const char *vec_load;
    const char *vec_store;

    /* ---- the addressing model and typing of languages that are not C ----
     * (GLSL: storage buffers are arrays in buffer blocks, shared memory is
     * declared at module scope, casts are constructors, booleans are not
     * integers).  Every field NULL/0 keeps the C-pointer model above. */
    /* Conversion template, $t the type name, $v the value: "$t($v)".
     * NULL: C casts. */
    const char *cast;
    /* The boolean type of a language whose comparisons and logical
     * operators yield a type that does not convert to int implicitly
     * ("bool"; needs cast): the kit converts truth values to int (the
     * compute type of bool) and back to bool_type where a condition is
     * needed, declares its own flags as bool_type, and emits no "(void)x;"
     * statements.  NULL: C truth values. */
    const char *bool_type;
    /* Element $o of array $b as an lvalue: "$b[int($o)]" (GLSL indexes
     * with 32-bit integers).  NULL: "$b[$o]". */
    const char *subscript;
    /* No pointers: a module-scope declaration of tensor parameter $i as
     * an array named $n of storage type $t, e.g.
     * "layout(std430, set = 0, binding = $i) buffer tc_B$i { $t $n[]; };".
     * The kernel then takes no tensor parameters; native atomics get $p as
     * the element lvalue (subscript) and compare-and-swap loops work on an
     * aliased view of the tensor's 32-bit (64-bit) words declared by
     * word_decl ($i, $n the view's name, $t the word type), so CAS on
     * block-wide memory is unsupported (the kit says so). */
    const char *tensor_decl;
    const char *word_decl;
    /* Module-scope block declaring the symbol values, $m the members
     * ("SYMTYPE tc_sym0; SYMTYPE tc_sym1;"), e.g.
     * "layout(push_constant) uniform tc_Syms { $m };".  The kernel then
     * takes no symbol parameters.  NULL: symbols are kernel parameters. */
    const char *sym_block;
    /* Module-scope declaration of a block-wide array: $t the storage type,
     * $n the name, $c the element count ("shared $t $n[$c];").  NULL:
     * shared_qual arrays declared inside the kernel. */
    const char *shared_decl;
    /* A module-scope line before the kernel, $x $y $z threads per
     * dimension, $n total: "layout(local_size_x = $x, local_size_y = $y,
     * local_size_z = $z) in;".  NULL: none. */
    const char *kernel_layout;
    /* The name of float math function base ("exp", "fabs", "rsqrt",
     * "fmod", ...) for float (dbl=0) or double (dbl=1), NULL for the
     * default (math_generic); called with user. */
    const char *(*math_name)(void *user, const char *base, int dbl);
    /* Suffix of a float64 literal ("lf" in GLSL, where 1.5 is a float).
     * NULL: none (C). */
    const char *double_suffix;
    /* 1: offsets into tensors, region bases and flattened parallel
     * indices are 32-bit ints (type_name[TILEC_INT32]) instead of 64-bit:
     * cheaper on GPUs, no 64-bit integer support needed for index math;
     * the backend must then refuse tensors of 2^31 elements or more.  A
     * constant dimension beyond int32 fails generation.  0: 64-bit. */
    uint32_t index32;
    /* Cross-lane reductions (optional; 0 / NULL: block-wide trees in
     * shared memory).  subgroup_size is the width of the lockstep group
     * (wavefront, warp), whose lanes are consecutive tc_tid values
     * starting at multiples of it; shfl_xor an expression template giving
     * the value $v of the lane whose index within its group of $w lanes
     * differs by the bit mask $m, e.g. "__shfl_xor($v, $m, $w)" (HIP).  A
     * reduction with at most subgroup_size threads per output then
     * combines them with log2(G) shuffles and no barrier. */
    uint32_t subgroup_size;
    const char *shfl_xor;

    /* ---- asynchronous copies, and a hook after statements (lowered IR) ----
     * Asynchronous global -> shared copies (optional; NULL: a copy_async
     * runs as a plain copy and its commits and waits print nothing).  The
     * vector steps of a copy_async (see vec_width; the global region wholly
     * inside its tensor) become async_copy statements: $d a pointer to the
     * shared destination, $s one to the global source, $n the bytes (4, 8
     * or 16), e.g. "tl_cp_async$n($d, $s);" (CUDA cp.async); its scalar
     * fallback stays a plain copy, which completes early (valid).
     * async_commit closes the group of the copies issued since the last
     * one ("tl_cp_commit();"); async_wait, $n the newest groups that may
     * stay pending, completes the others for this thread
     * ("tl_cp_wait<$n>();"): the barrier the pipeline pass placed after it
     * makes them visible to the block. */
    const char *async_copy;
    const char *async_commit;
    const char *async_wait;
    /* Optional: called after the kit printed statement s at block level
     * (loops and ifs too, after their closing brace), so that a hook can
     * finish what a statement inside a loop left pending (an MMA whose wait
     * the pipeline pass deferred, lower.mma_wait).  0, or -1 on error
     * (after tilec_simt_fail). */
    int (*stmt_after)(void *user, tilec_simt_ctx_t *ctx, const tilec_ir_stmt_t *s);
    /* Qualifier of the trip count of a block-level (work-group uniform)
     * loop whose extent is known only at run time, e.g. "volatile"
     * (OpenCL: on PoCL 3.1 a later work-group runs such a loop, when it
     * holds barriers, with the trip count the first work-group computed,
     * unless the count is opaque to the compiler's uniformity analysis).
     * NULL: none. */
    const char *uniform_trip_qual;
    /* Optional hook for block-level serial and pipelined loops (the
     * statement hook sees only the statements inside them): return 0 to
     * let the kit print the loop, 1 when the hook printed it — typically
     * code before it, tilec_simt_gen_loop(ctx, s), code after it (Vulkan
     * keeps cooperative-matrix accumulators in registers across a K loop)
     * — or -1 on error.  The barriers are the kit's as for a loop it
     * prints itself. */
    tilec_simt_stmt_hook_fn loop_hook;
    /* Optional: parameters appended to the kernel's parameter list after
     * the symbols, e.g. CUDA's "const __grid_constant__ CUtensorMap m0"
     * (NULL or "": none). */
    const char *extra_params;
    /* Lowered IR: the block-wide pool is at least this many bytes, the
     * dialect's own objects placed after the shared-memory plan (CUDA's
     * mbarriers); the kit's scratch goes after them. */
    uint64_t pool_min;
    /* Float min/max through the dialect's fmin/fmax (math names "fmin",
     * "fmax": one instruction on GPUs, and NaN is dropped as the
     * interpreter's fmin/fmax drop it) instead of a compare and select. */
    int native_fminmax;
    /* Optional (NULL: the gather prints an if/else with w scalar zeros):
     * the asynchronous copy of a gathered group (lower_gather.c) under its
     * condition, writing $n zero bytes to $d where condition $c fails and
     * reading the source only where it holds; $s the source, $b the base
     * of its tensor (a valid address to name instead), $n the bytes, e.g.
     * "tl_cp_async_zf<$n>($d, $s, $b, $c);" (CUDA: cp.async with a source
     * size of 0).  One straight-line statement per group: no branch, so
     * the groups of a thread unroll and their shared index terms fold. */
    const char *async_copy_zfill;
    /* Optional (NULL: async_copy_zfill as above): the same copy with the
     * source as the base $b of its tensor and an unsigned 32-bit element
     * offset $o, used where the tensor has a constant shape of fewer than
     * 2^32 elements (every element's offset fits; where the condition
     * fails the offset may have wrapped, and the copy reads nothing), e.g.
     * "tl_cp_async_zo<$n>($d, $b, $o, $c);" (CUDA: one 32-bit select and
     * one wide multiply-add an address instead of 64-bit arithmetic;
     * conv2d 3x3 on the H200, hand-edited, -6%). */
    const char *async_copy_zfill_off;
} tilec_simt_dialect_t;

/* Features a generated kernel uses (tilec_simt_result_t.uses). */
#define TILEC_SIMT_USES_F16          (1u << 0)
#define TILEC_SIMT_USES_BF16         (1u << 1)
#define TILEC_SIMT_USES_F64          (1u << 2)
#define TILEC_SIMT_USES_I64          (1u << 3)  /* int64/uint64 data (index math is always 64-bit) */
#define TILEC_SIMT_USES_ATOMIC       (1u << 4)
#define TILEC_SIMT_USES_ATOMIC_FLOAT (1u << 5)
#define TILEC_SIMT_USES_ATOMIC_64    (1u << 6)  /* 64-bit atomics or CAS */
#define TILEC_SIMT_USES_PRINT        (1u << 7)
#define TILEC_SIMT_USES_BARRIER      (1u << 8)
#define TILEC_SIMT_USES_SYMS         (1u << 9)

typedef struct tilec_simt_result {
    uint32_t struct_size;
    uint32_t uses;               /* TILEC_SIMT_USES_* */
    char *source;                /* malloc'd, NUL-terminated; tilec_simt_result_free */
    size_t source_len;
    uint64_t shared_bytes;       /* block-wide memory the kernel declares */
    uint32_t threads[3];         /* work-group size = kernel threads x y z */
    uint32_t nthreads;           /* product */
    uint32_t nparams;            /* tensor arguments */
    uint32_t nsyms;              /* int64 symbol arguments after them */
    uint32_t nbarriers;          /* barrier statements emitted */
} tilec_simt_result_t;

/* Fills d (zeroed first, struct_size set) with what the C++ GPU
 * dialects of the CUDA family (CUDA and HIP) share: C type names, bit
 * casts, `static __device__ __forceinline__` helpers, `__shared__`,
 * `extern "C" __global__ void` kernels with `__launch_bounds__($n)`,
 * blockIdx/threadIdx, `__syncthreads();`, native atomicAdd/Max/Min and
 * atomicCAS, overloaded math with rsqrt, printf.  The dialect then sets
 * its name, 16-bit floats, kernel name and hooks. */
void tilec_simt_dialect_cuda_family(tilec_simt_dialect_t *d);

/* Generates the kernel source for m.  0 on success; -1 with a message in err
 * (errlen bytes) for IR the kit cannot lower, an unsupported feature of the
 * dialect, a failing hook, or out of memory.  res is zeroed first (keeping
 * its struct_size). */
int tilec_simt_generate(const tilec_ir_module_t *m, const tilec_simt_dialect_t *d,
                        tilec_simt_result_t *res, char *err, size_t errlen);
void tilec_simt_result_free(tilec_simt_result_t *res);

/* ---- context functions for hooks ----------------------------------------
 * Strings returned live until tilec_simt_generate returns. */

/* Appends one line (indented at the current level, newline added). */
void tilec_simt_emit(tilec_simt_ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Changes the indentation level by delta (for blocks a hook opens). */
void tilec_simt_indent(tilec_simt_ctx_t *c, int delta);
/* Records an error; generation stops and returns it. */
void tilec_simt_fail(tilec_simt_ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An expression in its compute type (float for 16-bit floats, int for bool). */
const char *tilec_simt_expr(tilec_simt_ctx_t *c, const tilec_ir_expr_t *e);
/* Value v of compute type for dtype from, converted (rounded) to dtype to. */
const char *tilec_simt_convert(tilec_simt_ctx_t *c, const char *v, tilec_dtype_t from, tilec_dtype_t to);
/* The generated name of a buffer ("b3") and the int64 row-major offset of
 * the index expressions idx[b->ndim]. */
const char *tilec_simt_buf_name(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b);
const char *tilec_simt_offset(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx);
/* Expressions reading b[off] (compute type) and statement writing value v
 * (compute type of b's dtype) to b[off]; off an int64 expression. */
const char *tilec_simt_load(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off);
const char *tilec_simt_store(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off, const char *v);
/* Element off of b as an lvalue of its storage type, where the kit placed
 * it (lowered IR: the shared-memory plan's address, or the register of a
 * register fragment): for hooks that move stored bits as they are
 * (matrix-core operands), where tilec_simt_load would convert. */
const char *tilec_simt_elem(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off);
/* The same from one index expression string per dimension (idx[b->ndim],
 * e.g. "(tc_m0 + tc_lane % 16)"; a ring's stage index first): the
 * layout's address is written over the indices directly, without the
 * division chain that recovers indices from a flat offset, so an
 * intrinsic's per-lane addresses (ldmatrix rows, matrix descriptors)
 * stay cheap. */
const char *tilec_simt_elem_at(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *const *idx);
/* Dimension d of b as an int64 expression. */
const char *tilec_simt_dim(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, int d);
/* Compute type name of a dtype. */
const char *tilec_simt_ctype(tilec_simt_ctx_t *c, tilec_dtype_t t);
/* Where a buffer lives (v1: SHARED for shared/fragment, else PRIVATE;
 * globals report SHARED too but are kernel arguments). */
tilec_simt_place_t tilec_simt_place_of(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b);
/* 1 when the statement being lowered runs per thread (inside a T.Parallel
 * body, or a thread-0 section), 0 when at block level (every thread runs
 * it uniformly: a hook must then cooperate over tc_tid/tc_nthreads). */
int tilec_simt_per_thread(tilec_simt_ctx_t *c);
/* Emits the dialect's barrier (only call at block level). */
void tilec_simt_barrier(tilec_simt_ctx_t *c);
/* Features used so far; a hook may add bits. */
uint32_t tilec_simt_uses(tilec_simt_ctx_t *c);
void tilec_simt_add_uses(tilec_simt_ctx_t *c, uint32_t bits);
/* A fresh suffix for temporaries the hook declares (tc_h<N>). */
int tilec_simt_tmp(tilec_simt_ctx_t *c);
/* Prints block-level serial loop s as the kit would (the loop_hook is not
 * called again for s; it is for the loops inside). */
void tilec_simt_gen_loop(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);
/* The dialect in use. */
const tilec_simt_dialect_t *tilec_simt_dialect(tilec_simt_ctx_t *c);

/* ---- for matrix-instruction hooks (simt_mma.c) ----------------------------
 * A dialect prints a T.gemm the gemm_warp pass put on a matrix
 * instruction of the target description (lower.mma, lower.mma_shape,
 * lower.warp, lower.mma_tiles): the group (warp, warpgroup, wavefront) g
 * = (r / WM) * gn + c / WN of the block's threads owns the WM x WN tile
 * of C at ((g / gn) * WM, (g % gn) * WN), made of mt x nt instruction
 * tiles im x in. */
typedef struct tilec_simt_mma_plan {
    const tilec_target_mma_t *e; /* the description's entry lower.mma names */
    int64_t M, N, K;             /* C is M x N; K the reduction (constant) */
    int64_t gm, gn;              /* groups along M and N */
    int64_t WM, WN;              /* one group's tile */
    int64_t im, in;              /* one instruction's tile (lower.mma_shape) */
    int64_t mt, nt;              /* instruction tiles of a group along M and N */
    int rpt;                     /* accumulator registers of one instruction tile in each thread */
    /* 1: C is a register fragment whose layout (lower_layout's "mma.acc")
     * is the instructions' accumulators: register (ti * nt + tj) * rpt + j
     * of a thread is register j of its lane in instruction tile (ti, tj)
     * of its group (checked element by element) */
    int regs;
} tilec_simt_mma_plan_t;

/* The plan of gemm s for description t: 1, 0 when s is not on one of
 * t's matrix instructions (lower.mma absent, "simt" or not t's), -1 after
 * tilec_simt_fail (shapes that do not tile, per-thread code, operands of
 * rank other than 2 after their leading ring indices). */
int tilec_simt_mma_plan(tilec_simt_ctx_t *c, const tilec_target_desc_t *t, const tilec_ir_stmt_t *s,
                        tilec_simt_mma_plan_t *p);
/* 1 when C's register layout is the accumulators of plan p (the check
 * behind p->regs), for a plan the hook builds itself (another gemm's C). */
int tilec_simt_mma_regs_match(const tilec_ir_buffer_t *C, const tilec_simt_mma_plan_t *p);
/* The row (axis 0) or column (axis 1) inside its instruction tile of
 * accumulator register j of the thread whose lane in its group is the
 * expression lane, from the description's modes. */
const char *tilec_simt_mma_acc_coord(tilec_simt_ctx_t *c, const tilec_simt_mma_plan_t *p, int axis, int j,
                                     const char *lane);

/* ---- launch-time helpers (host side) --------------------------------------
 * A backend keeps the parsed module of a compiled kernel and evaluates its
 * grid and parameter shapes for the symbol values of each launch.  syms[]
 * are the values in kernel symbol order (the order of tilec_plaunch_t.syms);
 * nsyms must be the kernel's symbol count. */

/* Symbols of the kernel (variables of kind SYM), in order. */
int tilec_simt_sym_count(const tilec_ir_kernel_t *k);
/* Value of an integer expression of constants and symbols (the forms the
 * frontend puts in shapes and grid extents: + - * // % / min max select
 * casts comparisons).  0, or -1 for anything else, division by zero or a
 * result out of int64 range. */
int tilec_simt_eval_int(const tilec_ir_kernel_t *k, const tilec_ir_expr_t *e, const int64_t *syms, uint32_t nsyms,
                        int64_t *out);
/* The grid (1 for unused dimensions); 0 or -1 (an extent that does not
 * evaluate or is negative or above INT32_MAX). */
int tilec_simt_grid(const tilec_ir_kernel_t *k, const int64_t *syms, uint32_t nsyms, int64_t grid[3]);
/* Bytes parameter i occupies; 0 or -1 (a bad shape). */
int tilec_simt_param_bytes(const tilec_ir_kernel_t *k, int i, const int64_t *syms, uint32_t nsyms, uint64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
