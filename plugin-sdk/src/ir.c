/*
 * plugin-sdk/src/ir.c — the tile IR's arena, dtype helpers, name tables and
 * node constructors (see tilec/ir.h).
 *
 * Everything here is shared by the core and by plugins (it is part of the
 * SDK archive), so it depends on libc only.  The arena is a list of chunks
 * handed out by bumping a pointer; all memory is zeroed and 16-byte aligned
 * and is freed at once.  The 16-bit float conversions are done with integer
 * arithmetic on the bits of a double so that every conversion rounds exactly
 * once (to nearest, ties to even), including subnormals, overflow to
 * infinity and NaN.
 */
#include "tilec/ir.h"
#include "ir_internal.h"
#include "tilec/ir_walk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ------------------------------------------------------------ */

#define ARENA_ALIGN 16
#define ARENA_CHUNK 65536

struct tilec_arena_chunk {
    tilec_arena_chunk_t *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    size_t pad;  /* keeps the header a multiple of 16 bytes */
};

_Static_assert(sizeof(tilec_arena_chunk_t) % ARENA_ALIGN == 0, "chunk header alignment");

void tilec_arena_init(tilec_arena_t *a)
{
    a->head = NULL;
    a->bytes = 0;
}

void tilec_arena_destroy(tilec_arena_t *a)
{
    tilec_arena_chunk_t *c = a->head;
    while (c) {
        tilec_arena_chunk_t *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
    a->bytes = 0;
}

void *tilec_arena_alloc(tilec_arena_t *a, size_t size)
{
    tilec_arena_chunk_t *c;
    size_t need;
    if (size == 0) {
        size = 1;
    }
    if (size > SIZE_MAX - 2 * ARENA_ALIGN - sizeof(tilec_arena_chunk_t)) {
        return NULL;
    }
    need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    c = a->head;
    if (!c || c->size - c->used < need) {
        size_t csize = need > ARENA_CHUNK / 4 ? need : ARENA_CHUNK;
        tilec_arena_chunk_t *n = calloc(1, sizeof(tilec_arena_chunk_t) + csize);
        if (!n) {
            return NULL;
        }
        n->size = csize;
        n->used = 0;
        if (c && csize != ARENA_CHUNK) {
            /* A big block gets its own chunk behind the current one, so the
             * space left in the current chunk stays usable. */
            n->next = c->next;
            c->next = n;
            c = n;
        } else {
            n->next = c;
            a->head = n;
            c = n;
        }
    }
    {
        char *p = (char *)(c + 1) + c->used;
        c->used += need;
        a->bytes += need;
        return p;
    }
}

char *tilec_arena_strndup(tilec_arena_t *a, const char *s, size_t n)
{
    char *p;
    if (!s) {
        return NULL;
    }
    if (n == SIZE_MAX) {
        return NULL;
    }
    p = tilec_arena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

char *tilec_arena_strdup(tilec_arena_t *a, const char *s)
{
    if (!s) {
        return NULL;
    }
    return tilec_arena_strndup(a, s, strlen(s));
}

/* ---- dtypes ----------------------------------------------------------- */

static const char *const dtype_names[TILEC_DTYPE_COUNT] = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
    "int4", "uint4", "float4_e2m1fn",
};
static const unsigned char dtype_sizes[TILEC_DTYPE_COUNT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 1, 1, 1, 1, 1};

const char *tilec_dtype_name(tilec_dtype_t t)
{
    if ((unsigned)t >= TILEC_DTYPE_COUNT) {
        return "?";
    }
    return dtype_names[t];
}

int tilec_dtype_from_name(const char *name)
{
    int i;
    if (!name) {
        return -1;
    }
    for (i = 0; i < TILEC_DTYPE_COUNT; i++) {
        if (strcmp(name, dtype_names[i]) == 0) {
            return i;
        }
    }
    if (strcmp(name, "float") == 0) {
        return TILEC_FLOAT32;
    }
    if (strcmp(name, "float8_e4m3") == 0) { /* TileLang's other spelling */
        return TILEC_FLOAT8_E4M3FN;
    }
    return -1;
}

size_t tilec_dtype_size(tilec_dtype_t t)
{
    if ((unsigned)t >= TILEC_DTYPE_COUNT) {
        return 0;
    }
    return dtype_sizes[t];
}

unsigned tilec_dtype_bits(tilec_dtype_t t)
{
    return tilec_dtype_is_4bit(t) ? 4u : (unsigned)tilec_dtype_size(t) * 8u;
}

int tilec_dtype_is_4bit(tilec_dtype_t t)
{
    return t == TILEC_INT4 || t == TILEC_UINT4 || t == TILEC_FLOAT4_E2M1FN;
}

size_t tilec_dtype_tensor_bytes(tilec_dtype_t t, size_t n)
{
    return tilec_dtype_is_4bit(t) ? n / 2 + n % 2 : n * tilec_dtype_size(t);
}

int tilec_dtype_is_float(tilec_dtype_t t)
{
    return t == TILEC_FLOAT16 || t == TILEC_BFLOAT16 || t == TILEC_FLOAT32 || t == TILEC_FLOAT64 ||
           tilec_dtype_is_float8(t) || t == TILEC_FLOAT4_E2M1FN;
}

int tilec_dtype_is_float8(tilec_dtype_t t)
{
    return t == TILEC_FLOAT8_E4M3FN || t == TILEC_FLOAT8_E5M2;
}

int tilec_dtype_is_int(tilec_dtype_t t)
{
    return (t >= TILEC_INT8 && t <= TILEC_UINT64) || t == TILEC_INT4 || t == TILEC_UINT4;
}

int tilec_dtype_is_signed(tilec_dtype_t t)
{
    return (t >= TILEC_INT8 && t <= TILEC_INT64) || t == TILEC_INT4 || tilec_dtype_is_float(t);
}

/* ---- 16-bit floats ---------------------------------------------------- */

/* Rounds d to a binary format with ebits exponent bits and mbits stored
 * mantissa bits (IEEE layout, 1 + ebits + mbits <= 16), once, to nearest
 * even.  Works on the double's bits so no intermediate rounding happens.
 * fn ("finite"): the format has no infinity and its top exponent holds
 * normal numbers, all ones is NaN (float8_e4m3fn); what would round past the
 * largest finite value, infinities and NaN give that NaN. */
static uint16_t round_to_fmt(double d, int ebits, int mbits, int fn)
{
    uint64_t bits, frac, sig;
    uint16_t sign;
    int exp, bias = (1 << (ebits - 1)) - 1, te, shift;
    uint32_t expmax = (1u << ebits) - 1, out;

    memcpy(&bits, &d, sizeof bits);
    sign = (uint16_t)((bits >> 63) << (ebits + mbits));
    exp = (int)((bits >> 52) & 0x7ff);
    frac = bits & ((UINT64_C(1) << 52) - 1);
    if (exp == 0x7ff && fn) {
        return (uint16_t)(sign | (expmax << mbits) | ((1u << mbits) - 1));
    }
    if (exp == 0x7ff) {
        if (frac) { /* NaN: quiet, keep the top payload bits */
            uint32_t payload = (uint32_t)(frac >> (52 - mbits));
            return (uint16_t)(sign | (expmax << mbits) | (1u << (mbits - 1)) | payload);
        }
        return (uint16_t)(sign | (expmax << mbits));
    }
    if (exp == 0 && frac == 0) {
        return sign;
    }
    if (exp == 0) { /* double subnormal: far below any 16-bit format */
        exp = 1;
        sig = frac;
    } else {
        sig = frac | (UINT64_C(1) << 52);
    }
    te = exp - 1023 + bias; /* biased target exponent for a normal result */
    if (te >= 1) {
        shift = 52 - mbits;
    } else {
        shift = 52 - mbits + (1 - te);
    }
    if (shift > 54) {
        return sign; /* below half the smallest subnormal */
    }
    {
        uint64_t mant = sig >> shift;
        uint64_t rem = sig & ((UINT64_C(1) << shift) - 1);
        uint64_t half = UINT64_C(1) << (shift - 1);
        uint64_t up = rem > half || (rem == half && (mant & 1));
        if (te >= 1) {
            uint64_t r = ((uint64_t)te << mbits) + (mant - (UINT64_C(1) << mbits)) + up;
            if (fn && r >= (((uint64_t)expmax << mbits) | ((1u << mbits) - 1))) {
                return (uint16_t)(sign | (expmax << mbits) | ((1u << mbits) - 1));
            }
            if (!fn && r >= ((uint64_t)expmax << mbits)) {
                return (uint16_t)(sign | (expmax << mbits));
            }
            out = (uint32_t)r;
        } else {
            out = (uint32_t)(mant + up); /* a carry makes the smallest normal */
        }
    }
    return (uint16_t)(sign | out);
}

static uint16_t round_to_small(double d, int ebits, int mbits)
{
    return round_to_fmt(d, ebits, mbits, 0);
}

/* Exact widening of a 16-bit (or 8-bit) format to double; fn as above. */
static double widen_fmt(uint16_t h, int ebits, int mbits, int fn)
{
    int bias = (1 << (ebits - 1)) - 1;
    uint32_t expmax = (1u << ebits) - 1;
    uint32_t exp = (h >> mbits) & expmax;
    uint32_t mant = h & ((1u << mbits) - 1);
    int neg = (h >> (ebits + mbits)) & 1;
    double v;
    if (fn && exp == expmax && mant == (1u << mbits) - 1) {
        v = NAN;
    } else if (fn && exp == expmax) {
        v = ldexp((double)(mant | (1u << mbits)), (int)exp - bias - mbits);
    } else if (exp == expmax) {
        v = mant ? NAN : INFINITY;
    } else if (exp == 0) {
        v = ldexp((double)mant, 1 - bias - mbits);
    } else {
        v = ldexp((double)(mant | (1u << mbits)), (int)exp - bias - mbits);
    }
    return neg ? -v : v;
}

static double widen_small(uint16_t h, int ebits, int mbits)
{
    return widen_fmt(h, ebits, mbits, 0);
}

uint8_t tilec_f64_to_f8e4m3fn(double d) { return (uint8_t)round_to_fmt(d, 4, 3, 1); }
uint8_t tilec_f64_to_f8e5m2(double d) { return (uint8_t)round_to_fmt(d, 5, 2, 0); }
float tilec_f8e4m3fn_to_f32(uint8_t x) { return (float)widen_fmt(x, 4, 3, 1); }
float tilec_f8e5m2_to_f32(uint8_t x) { return (float)widen_fmt(x, 5, 2, 0); }

uint16_t tilec_f64_to_f16(double d) { return round_to_small(d, 5, 10); }
uint16_t tilec_f64_to_bf16(double d) { return round_to_small(d, 8, 7); }
/* A float widens to double exactly, so this rounds once too. */
uint16_t tilec_f32_to_f16(float f) { return round_to_small((double)f, 5, 10); }
uint16_t tilec_f32_to_bf16(float f) { return round_to_small((double)f, 8, 7); }

float tilec_f16_to_f32(uint16_t h)
{
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
        /* keep sign and payload of a NaN */
        uint32_t b = ((uint32_t)(h & 0x8000) << 16) | 0x7f800000u | ((uint32_t)(h & 0x3ff) << 13);
        float f;
        memcpy(&f, &b, sizeof f);
        return f;
    }
    return (float)widen_small(h, 5, 10);
}

float tilec_bf16_to_f32(uint16_t h)
{
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* ---- name tables ------------------------------------------------------ */

static int find_name(const char *const *tab, int n, const char *name)
{
    int i;
    if (!name) {
        return -1;
    }
    for (i = 0; i < n; i++) {
        if (strcmp(tab[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

#define NAMEOF(tab, i) ((unsigned)(i) < sizeof(tab) / sizeof(tab[0]) ? tab[i] : "?")
#define COUNTOF(tab) ((int)(sizeof(tab) / sizeof(tab[0])))

static const char *const scope_names[] = {"global", "shared", "fragment", "local", "var"};
static const char *const unop_names[] = {
    "neg", "not", "abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sigmoid", "floor", "ceil",
    "bitcast",
};
static const char *const binop_names[] = {
    "add", "sub", "mul", "div", "floordiv", "floormod", "pow", "min", "max",
    "eq", "ne", "lt", "le", "gt", "ge", "and", "or",
    "bitand", "bitor", "bitxor", "shl", "shr",
};
static const char *const loop_names[] = {"serial", "parallel", "pipelined", "unroll", "vectorized"};
static const char *const reduce_names[] = {"sum", "max", "min", "abssum", "absmax"};
static const char *const atomic_names[] = {"add", "max", "min"};
static const char *const policy_names[] = {"square", "fullrow", "fullcol"};

_Static_assert(sizeof(scope_names) / sizeof(scope_names[0]) == TILEC_SCOPE_COUNT, "scope names");
_Static_assert(sizeof(unop_names) / sizeof(unop_names[0]) == TILEC_UN_COUNT, "unop names");
_Static_assert(sizeof(binop_names) / sizeof(binop_names[0]) == TILEC_BIN_COUNT, "binop names");

const char *tilec_scope_name(tilec_scope_t s) { return NAMEOF(scope_names, s); }
int tilec_scope_from_name(const char *name) { return find_name(scope_names, COUNTOF(scope_names), name); }
const char *tilec_unop_name(tilec_unop_t op) { return NAMEOF(unop_names, op); }
const char *tilec_binop_name(tilec_binop_t op) { return NAMEOF(binop_names, op); }
int tilec_unop_from_name(const char *name) { return find_name(unop_names, COUNTOF(unop_names), name); }
int tilec_binop_from_name(const char *name) { return find_name(binop_names, COUNTOF(binop_names), name); }
const char *tilec_loop_kind_name(tilec_loop_kind_t k) { return NAMEOF(loop_names, k); }
const char *tilec_reduce_op_name(tilec_reduce_op_t op) { return NAMEOF(reduce_names, op); }
const char *tilec_atomic_op_name(tilec_atomic_op_t op) { return NAMEOF(atomic_names, op); }
const char *tilec_policy_name(tilec_gemm_policy_t p) { return NAMEOF(policy_names, p); }

static const char *const var_kind_names[] = {"block", "loop", "sym", "let", "layout"};
static const char *const stmt_names[] = {
    "for", "if", "store", "assign", "copy", "fill", "gemm", "reduce", "cumsum", "atomic", "sync", "print", "hint",
    "copy_async", "async_commit", "async_wait", "barrier", "barrier_init", "barrier_arrive", "barrier_wait",
};
static const char *const layout_names[] = {"regs", "smem"};

_Static_assert(sizeof(stmt_names) / sizeof(stmt_names[0]) == TILEC_ST_KIND_COUNT, "statement names");

const char *tilec_var_kind_name(tilec_var_kind_t k) { return NAMEOF(var_kind_names, k); }
const char *tilec_stmt_kind_name(tilec_stmt_kind_t k) { return NAMEOF(stmt_names, k); }
const char *tilec_layout_kind_name(tilec_layout_kind_t k) { return NAMEOF(layout_names, k); }
int tilec_irx_stmt_kind_from_name(const char *name) { return find_name(stmt_names, COUNTOF(stmt_names), name); }
/* "layout" is not a declarable kind: placeholders are never in a kernel's table */
int tilec_irx_var_kind_from_name(const char *name) { return find_name(var_kind_names, TILEC_VAR_LET + 1, name); }
int tilec_irx_layout_kind_from_name(const char *name) { return find_name(layout_names, COUNTOF(layout_names), name); }
int tilec_irx_loop_kind_from_name(const char *name) { return find_name(loop_names, COUNTOF(loop_names), name); }
int tilec_irx_reduce_op_from_name(const char *name) { return find_name(reduce_names, COUNTOF(reduce_names), name); }
int tilec_irx_atomic_op_from_name(const char *name) { return find_name(atomic_names, COUNTOF(atomic_names), name); }
int tilec_irx_policy_from_name(const char *name) { return find_name(policy_names, COUNTOF(policy_names), name); }

/* ---- string map ------------------------------------------------------- */

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603u;
    while (*s) {
        h = (h ^ (unsigned char)*s++) * 1099511628211u;
    }
    return h;
}

void tilec_irx_map_init(tilec_irx_map_t *m)
{
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->n = 0;
}

void tilec_irx_map_free(tilec_irx_map_t *m)
{
    free(m->keys);
    free(m->vals);
    tilec_irx_map_init(m);
}

int tilec_irx_map_get(const tilec_irx_map_t *m, const char *key)
{
    size_t i;
    if (!m->cap) {
        return -1;
    }
    for (i = hash_str(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
        if (strcmp(m->keys[i], key) == 0) {
            return m->vals[i];
        }
    }
    return -1;
}

int tilec_irx_map_put(tilec_irx_map_t *m, const char *key, int val)
{
    size_t i;
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64, j;
        const char **nk;
        int *nv;
        if (ncap > SIZE_MAX / 2 / sizeof(*nk)) {
            return -1;
        }
        nk = calloc(ncap, sizeof *nk);
        nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return -1;
        }
        for (j = 0; j < m->cap; j++) {
            if (m->keys[j]) {
                size_t k = hash_str(m->keys[j]) & (ncap - 1);
                while (nk[k]) {
                    k = (k + 1) & (ncap - 1);
                }
                nk[k] = m->keys[j];
                nv[k] = m->vals[j];
            }
        }
        free(m->keys);
        free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = ncap;
    }
    for (i = hash_str(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
        if (strcmp(m->keys[i], key) == 0) {
            return 1;
        }
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return 0;
}

/* ---- construction ----------------------------------------------------- */

tilec_ir_module_t *tilec_ir_module_new(tilec_arena_t *a)
{
    tilec_ir_module_t *m = tilec_arena_alloc(a, sizeof *m);
    if (m) {
        m->version_major = TILEC_IR_VERSION_MAJOR;
        m->version_minor = TILEC_IR_VERSION_MINOR;
    }
    return m;
}

tilec_ir_kernel_t *tilec_ir_kernel_new(tilec_arena_t *a, const char *name)
{
    tilec_ir_kernel_t *k = tilec_arena_alloc(a, sizeof *k);
    if (!k) {
        return NULL;
    }
    k->name = tilec_arena_strdup(a, name ? name : "kernel");
    if (!k->name) {
        return NULL;
    }
    k->threads[0] = k->threads[1] = k->threads[2] = 1;
    k->ngrid = 0;
    return k;
}

/* The var and buffer tables grow by doubling.  Each table allocated here is
 * preceded by a small header recording its capacity and its own address, so
 * a table that someone else allocated (exactly sized) is recognized and
 * copied instead of overrun. */
typedef struct table_hdr {
    const void *table;
    size_t cap;
} table_hdr_t;

_Static_assert(sizeof(table_hdr_t) <= ARENA_ALIGN, "table header size");

static void **table_push(tilec_arena_t *a, void **table, int n, void *item)
{
    size_t cap = 0;
    if (table && n > 0) {
        const table_hdr_t *h = (const table_hdr_t *)((const char *)table - ARENA_ALIGN);
        if (h->table == table) {
            cap = h->cap;
        }
    }
    if ((size_t)n >= cap) {
        size_t ncap = n < 4 ? 8 : (size_t)n * 2;
        char *mem;
        table_hdr_t *h;
        void **nt;
        if (ncap > (SIZE_MAX - ARENA_ALIGN) / sizeof(void *)) {
            return NULL;
        }
        mem = tilec_arena_alloc(a, ARENA_ALIGN + ncap * sizeof(void *));
        if (!mem) {
            return NULL;
        }
        nt = (void **)(mem + ARENA_ALIGN);
        h = (table_hdr_t *)mem;
        h->table = nt;
        h->cap = ncap;
        if (n > 0) {
            memcpy(nt, table, (size_t)n * sizeof(void *));
        }
        table = nt;
    }
    table[n] = item;
    return table;
}

tilec_ir_var_t *tilec_ir_var_add(tilec_arena_t *a, tilec_ir_kernel_t *k, const char *name,
                                 tilec_dtype_t t, tilec_var_kind_t kind)
{
    tilec_ir_var_t *v = tilec_arena_alloc(a, sizeof *v);
    void **nt;
    if (!v || k->nvars < 0 || k->nvars == INT32_MAX) {
        return NULL;
    }
    v->name = tilec_arena_strdup(a, name ? name : "v");
    if (!v->name) {
        return NULL;
    }
    v->dtype = t;
    v->kind = kind;
    v->id = k->nvars;
    nt = table_push(a, (void **)k->vars, k->nvars, v);
    if (!nt) {
        return NULL;
    }
    k->vars = (tilec_ir_var_t **)nt;
    k->nvars++;
    return v;
}

tilec_ir_buffer_t *tilec_ir_buffer_add(tilec_arena_t *a, tilec_ir_kernel_t *k, const char *name,
                                       tilec_scope_t s, tilec_dtype_t t, int ndim,
                                       tilec_ir_expr_t *const *shape)
{
    tilec_ir_buffer_t *b = tilec_arena_alloc(a, sizeof *b);
    void **nt;
    if (!b || ndim < 0 || ndim > TILEC_IR_MAX_DIMS || k->nbufs < 0 || k->nbufs == INT32_MAX) {
        return NULL;
    }
    b->name = tilec_arena_strdup(a, name ? name : "buf");
    if (!b->name) {
        return NULL;
    }
    b->scope = s;
    b->dtype = t;
    b->ndim = ndim;
    b->shape = tilec_arena_alloc(a, (size_t)(ndim ? ndim : 1) * sizeof *b->shape);
    if (!b->shape) {
        return NULL;
    }
    if (shape) {
        memcpy(b->shape, shape, (size_t)ndim * sizeof *b->shape);
    }
    b->id = k->nbufs;
    nt = table_push(a, (void **)k->bufs, k->nbufs, b);
    if (!nt) {
        return NULL;
    }
    k->bufs = (tilec_ir_buffer_t **)nt;
    k->nbufs++;
    return b;
}

static tilec_ir_expr_t *expr_new(tilec_arena_t *a, tilec_expr_kind_t kind, tilec_dtype_t t)
{
    tilec_ir_expr_t *e = tilec_arena_alloc(a, sizeof *e);
    if (e) {
        e->kind = kind;
        e->dtype = t;
    }
    return e;
}

tilec_ir_expr_t *tilec_ir_int(tilec_arena_t *a, int64_t v, tilec_dtype_t t)
{
    tilec_ir_expr_t *e = expr_new(a, TILEC_EX_INT, t);
    if (e) {
        e->u.i = v;
    }
    return e;
}

tilec_ir_expr_t *tilec_ir_float(tilec_arena_t *a, double v, tilec_dtype_t t)
{
    tilec_ir_expr_t *e = expr_new(a, TILEC_EX_FLOAT, t);
    if (e) {
        e->u.f = v;
    }
    return e;
}

tilec_ir_expr_t *tilec_ir_varref(tilec_arena_t *a, tilec_ir_var_t *v)
{
    tilec_ir_expr_t *e;
    if (!v) {
        return NULL;
    }
    e = expr_new(a, TILEC_EX_VAR, v->dtype);
    if (e) {
        e->u.var = v;
    }
    return e;
}

tilec_ir_expr_t *tilec_ir_load(tilec_arena_t *a, tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    tilec_ir_expr_t *e;
    int n;
    if (!b) {
        return NULL;
    }
    n = b->ndim > 0 ? b->ndim : 1;
    e = expr_new(a, TILEC_EX_LOAD, b->dtype);
    if (!e) {
        return NULL;
    }
    e->u.load.buf = b;
    e->u.load.idx = tilec_arena_alloc(a, (size_t)n * sizeof *e->u.load.idx);
    if (!e->u.load.idx) {
        return NULL;
    }
    if (idx && b->ndim > 0) {
        memcpy(e->u.load.idx, idx, (size_t)b->ndim * sizeof *idx);
    }
    return e;
}

tilec_ir_expr_t *tilec_ir_bitcast(tilec_arena_t *a, tilec_dtype_t t, tilec_ir_expr_t *x)
{
    tilec_ir_expr_t *e = tilec_ir_unary(a, TILEC_UN_BITCAST, x);
    if (e) {
        e->dtype = t;
    }
    return e;
}

tilec_ir_expr_t *tilec_ir_unary(tilec_arena_t *a, tilec_unop_t op, tilec_ir_expr_t *x)
{
    tilec_ir_expr_t *e;
    if (!x) {
        return NULL;
    }
    e = expr_new(a, TILEC_EX_UNARY, op == TILEC_UN_NOT ? TILEC_BOOL : x->dtype);
    if (e) {
        e->u.un.op = op;
        e->u.un.a = x;
    }
    return e;
}

static int binop_is_bool(tilec_binop_t op)
{
    return (op >= TILEC_BIN_EQ && op <= TILEC_BIN_GE) || op == TILEC_BIN_AND || op == TILEC_BIN_OR;
}

tilec_ir_expr_t *tilec_ir_binary(tilec_arena_t *a, tilec_binop_t op, tilec_ir_expr_t *x, tilec_ir_expr_t *y)
{
    tilec_ir_expr_t *e;
    if (!x || !y) {
        return NULL;
    }
    e = expr_new(a, TILEC_EX_BINARY, binop_is_bool(op) ? TILEC_BOOL : x->dtype);
    if (e) {
        e->u.bin.op = op;
        e->u.bin.a = x;
        e->u.bin.b = y;
    }
    return e;
}

tilec_ir_expr_t *tilec_ir_select(tilec_arena_t *a, tilec_ir_expr_t *c, tilec_ir_expr_t *x, tilec_ir_expr_t *y)
{
    tilec_ir_expr_t *e;
    if (!c || !x || !y) {
        return NULL;
    }
    e = expr_new(a, TILEC_EX_SELECT, x->dtype);
    if (e) {
        e->u.sel.cond = c;
        e->u.sel.a = x;
        e->u.sel.b = y;
    }
    return e;
}

tilec_ir_expr_t *tilec_ir_cast(tilec_arena_t *a, tilec_dtype_t t, tilec_ir_expr_t *x)
{
    tilec_ir_expr_t *e;
    if (!x) {
        return NULL;
    }
    e = expr_new(a, TILEC_EX_CAST, t);
    if (e) {
        e->u.cast.a = x;
    }
    return e;
}

tilec_ir_stmt_t *tilec_ir_stmt(tilec_arena_t *a, tilec_stmt_kind_t kind)
{
    tilec_ir_stmt_t *s = tilec_arena_alloc(a, sizeof *s);
    if (s) {
        s->kind = kind;
        if (kind == TILEC_ST_FOR) {
            s->u.loop.num_stages = 1;
        }
    }
    return s;
}

tilec_ir_mbarrier_t *tilec_ir_mbarrier_add(tilec_arena_t *a, tilec_ir_kernel_t *k, const char *name, int size,
                                           int arrive)
{
    tilec_ir_mbarrier_t *b = tilec_arena_alloc(a, sizeof *b);
    void **nt;
    if (!b || k->nmbars < 0 || k->nmbars == INT32_MAX) {
        return NULL;
    }
    b->name = tilec_arena_strdup(a, name ? name : "bar");
    if (!b->name) {
        return NULL;
    }
    b->size = size;
    b->arrive = arrive;
    b->id = k->nmbars;
    nt = table_push(a, (void **)k->mbars, k->nmbars, b);
    if (!nt) {
        return NULL;
    }
    k->mbars = (tilec_ir_mbarrier_t **)nt;
    k->nmbars++;
    return b;
}

/* ---- attributes and layouts (1.1) ------------------------------------- */

const tilec_ir_attr_t *tilec_ir_attr_get(int n, const tilec_ir_attr_t *list, const char *key)
{
    int i;
    if (!list || !key) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        if (list[i].key && strcmp(list[i].key, key) == 0) {
            return &list[i];
        }
    }
    return NULL;
}

int tilec_ir_attr_set(tilec_arena_t *a, int *n, tilec_ir_attr_t **list, const tilec_ir_attr_t *v)
{
    tilec_ir_attr_t c = *v, *slot = (tilec_ir_attr_t *)tilec_ir_attr_get(*n, *list, v->key);
    if (!v->key || *n < 0 || *n >= 1 << 20) {
        return -1;
    }
    c.key = tilec_arena_strdup(a, v->key);
    c.s = v->kind == TILEC_ATTR_STRING ? tilec_arena_strdup(a, v->s ? v->s : "") : NULL;
    c.tuple = NULL;
    if (!c.key || (v->kind == TILEC_ATTR_STRING && !c.s)) {
        return -1;
    }
    if (v->kind == TILEC_ATTR_TUPLE) {
        if (v->n < 0 || (v->n > 0 && !v->tuple) || v->n > 1 << 16) {
            return -1;
        }
        c.tuple = tilec_arena_alloc(a, (size_t)(v->n ? v->n : 1) * sizeof *c.tuple);
        if (!c.tuple) {
            return -1;
        }
        if (v->n) {
            memcpy(c.tuple, v->tuple, (size_t)v->n * sizeof *c.tuple);
        }
    } else {
        c.n = 0;
    }
    if (!slot) {
        /* lists are small: grow by copying */
        tilec_ir_attr_t *nl = tilec_arena_alloc(a, (size_t)(*n + 1) * sizeof *nl);
        if (!nl) {
            return -1;
        }
        if (*n) {
            memcpy(nl, *list, (size_t)*n * sizeof *nl);
        }
        slot = &nl[*n];
        *list = nl;
        (*n)++;
    }
    *slot = c;
    return 0;
}

int tilec_ir_attr_set_int(tilec_arena_t *a, int *n, tilec_ir_attr_t **list, const char *key, int64_t v)
{
    tilec_ir_attr_t x;
    memset(&x, 0, sizeof x);
    x.key = key;
    x.kind = TILEC_ATTR_INT;
    x.i = v;
    return tilec_ir_attr_set(a, n, list, &x);
}

int tilec_ir_attr_set_str(tilec_arena_t *a, int *n, tilec_ir_attr_t **list, const char *key, const char *v)
{
    tilec_ir_attr_t x;
    memset(&x, 0, sizeof x);
    x.key = key;
    x.kind = TILEC_ATTR_STRING;
    x.s = v;
    return tilec_ir_attr_set(a, n, list, &x);
}

int tilec_ir_attr_set_tuple(tilec_arena_t *a, int *n, tilec_ir_attr_t **list, const char *key,
                            const int64_t *v, int count)
{
    tilec_ir_attr_t x;
    memset(&x, 0, sizeof x);
    x.key = key;
    x.kind = TILEC_ATTR_TUPLE;
    x.n = count;
    x.tuple = (int64_t *)v;
    return tilec_ir_attr_set(a, n, list, &x);
}

tilec_ir_layout_t *tilec_ir_layout_new(tilec_arena_t *a, tilec_layout_kind_t kind, const char *name, int ndim)
{
    tilec_ir_layout_t *l;
    char nm[16];
    int d;
    if (ndim < 0 || ndim > TILEC_IR_MAX_DIMS) {
        return NULL;
    }
    l = tilec_arena_alloc(a, sizeof *l);
    if (!l) {
        return NULL;
    }
    l->kind = kind;
    l->name = tilec_arena_strdup(a, name ? name : "");
    l->ndim = ndim;
    l->threads = l->nlocal = l->replicate = 1;
    for (d = 0; d <= ndim; d++) {
        tilec_ir_var_t *v = tilec_arena_alloc(a, sizeof *v);
        if (!v) {
            return NULL;
        }
        if (d < ndim) {
            snprintf(nm, sizeof nm, "_i%d", d);
        } else {
            memcpy(nm, "_r", 3);
        }
        v->name = tilec_arena_strdup(a, nm);
        v->id = d;
        v->dtype = TILEC_INT32;
        v->kind = TILEC_VAR_LAYOUT;
        if (!v->name) {
            return NULL;
        }
        if (d < ndim) {
            l->ivar[d] = v;
        } else {
            l->rvar = v;
        }
    }
    return l->name ? l : NULL;
}

int tilec_ir_is_const_int(const tilec_ir_expr_t *e, int64_t *out)
{
    if (!e || e->kind != TILEC_EX_INT) {
        return 0;
    }
    if (out) {
        *out = e->u.i;
    }
    return 1;
}

int64_t tilec_ir_buffer_const_size(const tilec_ir_buffer_t *b)
{
    int64_t n = 1;
    int i;
    if (!b || b->ndim < 0 || !b->shape) {
        return -1;
    }
    for (i = 0; i < b->ndim; i++) {
        int64_t d;
        if (!tilec_ir_is_const_int(b->shape[i], &d) || d < 0) {
            return -1;
        }
        if (d != 0 && n > INT64_MAX / d) {
            return -1;
        }
        n *= d;
    }
    return n;
}

/* ---- version rule ----------------------------------------------------- */

static int needs_11_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    (void)w;
    return e->kind == TILEC_EX_BINARY && e->u.bin.op >= TILEC_BIN_BITAND ? TILEC_WALK_STOP : TILEC_WALK_CONTINUE;
}

static int needs_11_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    (void)w;
    if (s->nattrs > 0 || s->kind >= TILEC_ST_COPY_ASYNC ||
        (s->kind == TILEC_ST_GEMM && (s->u.gemm.a_lead || s->u.gemm.b_lead))) {
        return TILEC_WALK_STOP;
    }
    return TILEC_WALK_CONTINUE;
}

typedef struct dtype_pred {
    int (*is)(tilec_dtype_t);
} dtype_pred_t;

static int expr_has_dtype(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    const dtype_pred_t *p = w->user;
    return p->is(e->dtype) ? TILEC_WALK_STOP : TILEC_WALK_CONTINUE;
}

static int needs_14_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    (void)w;
    return e->kind == TILEC_EX_UNARY && e->u.un.op == TILEC_UN_BITCAST ? TILEC_WALK_STOP : TILEC_WALK_CONTINUE;
}

int tilec_ir_kernel_uses_dtype(const tilec_ir_kernel_t *k, int (*is)(tilec_dtype_t))
{
    tilec_ir_walk_t w;
    dtype_pred_t p = {is};
    int i;
    if (!k) {
        return 0;
    }
    for (i = 0; i < k->nbufs; i++) {
        if (k->bufs[i] && is(k->bufs[i]->dtype)) {
            return 1;
        }
    }
    for (i = 0; i < k->nvars; i++) {
        if (k->vars[i] && is(k->vars[i]->dtype)) {
            return 1;
        }
    }
    memset(&w, 0, sizeof w);
    w.expr_pre = expr_has_dtype;
    w.user = &p;
    /* the walk only reads; the cast drops const for the walker's signature */
    return tilec_ir_walk_kernel(&w, (tilec_ir_kernel_t *)k) == 1;
}

int tilec_ir_module_minor_needed(const tilec_ir_module_t *m)
{
    tilec_ir_kernel_t *k = m ? m->kernel : NULL;
    tilec_ir_walk_t w;
    int i;
    if (!k) {
        return 0;
    }
    memset(&w, 0, sizeof w);
    w.expr_pre = needs_14_expr;
    w.layouts = 1;
    if (tilec_ir_walk_kernel(&w, k) == 1) {
        return 4; /* 1.4: a bit cast */
    }
    if (tilec_ir_kernel_uses_dtype(k, tilec_dtype_is_4bit)) {
        return 3; /* 1.3: a 4-bit dtype anywhere */
    }
    if (tilec_ir_kernel_uses_dtype(k, tilec_dtype_is_float8)) {
        return 2; /* 1.2: a float8 dtype anywhere */
    }
    if (k->nmbars > 0) {
        return 1;
    }
    for (i = 0; i < k->nbufs; i++) {
        if (k->bufs[i] && (k->bufs[i]->layout || k->bufs[i]->nattrs > 0)) {
            return 1;
        }
    }
    memset(&w, 0, sizeof w);
    w.stmt_pre = needs_11_stmt;
    w.expr_pre = needs_11_expr;
    w.layouts = 1;
    /* the walk only reads; the cast drops const for the walker's signature */
    return tilec_ir_walk_kernel(&w, (tilec_ir_kernel_t *)k) == 1 ? 1 : 0;
}
