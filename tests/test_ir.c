/*
 * tests/test_ir.c — unit tests of the tile IR library: arena, the text
 * form (print -> read -> print is byte-identical on hand-built kernels that
 * use every statement and expression kind; malformed texts are rejected
 * with a located message),
 * the verifier (valid kernels pass, broken ones are rejected with a message
 * naming the statement and buffer) and the pass pipeline (constant
 * folding, pruning).  Finally every example program (examples/, .py) is compiled through the
 * frontend with each of its "# tilec-test:" define lines, and the module
 * must verify, round-trip, survive the passes and round-trip again.
 * (The dtypes' tests are in tests/test_ir_dtype.c, IR 1.4's bit cast in
 * tests/test_ir_bitcast.c.)
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "passes.h"
#include "tilec/ir.h"
#include "tilec/ir_walk.h"
#include "tilec/ir_check.h"
#include <criterion/redirect.h>

#include "ir_harness.h"

/* ---- helpers ---------------------------------------------------------- */

#define I32(v) tilec_ir_int(&A, (v), TILEC_INT32)
#define F32(v) tilec_ir_float(&A, (v), TILEC_FLOAT32)
#define VAR(x) tilec_ir_varref(&A, (x))
#define BIN(op, x, y) tilec_ir_binary(&A, TILEC_BIN_##op, (x), (y))

static tilec_ir_buffer_t *buf2(tilec_ir_kernel_t *k, const char *name, tilec_scope_t s, tilec_dtype_t t,
                               tilec_ir_expr_t *d0, tilec_ir_expr_t *d1)
{
    tilec_ir_expr_t *shape[2] = {d0, d1};
    return tilec_ir_buffer_add(&A, k, name, s, t, d1 ? 2 : 1, shape);
}

static tilec_ir_expr_t *load2(tilec_ir_buffer_t *b, tilec_ir_expr_t *i, tilec_ir_expr_t *j)
{
    tilec_ir_expr_t *idx[2] = {i, j};
    return tilec_ir_load(&A, b, idx);
}

static void region(tilec_ir_region_t *r, tilec_ir_buffer_t *b, tilec_ir_expr_t *b0, int64_t e0,
                   tilec_ir_expr_t *b1, int64_t e1)
{
    r->buf = b;
    r->base = tilec_arena_alloc(&A, 2 * sizeof *r->base);
    r->extent = tilec_arena_alloc(&A, 2 * sizeof *r->extent);
    r->base[0] = b0;
    r->extent[0] = e0;
    if (b->ndim > 1) {
        r->base[1] = b1;
        r->extent[1] = e1;
    }
}

static tilec_ir_stmt_t *loop(tilec_ir_var_t *v, tilec_ir_expr_t *extent, tilec_loop_kind_t kind, int stages,
                             tilec_ir_stmt_t *body)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_FOR);
    s->u.loop.var = v;
    s->u.loop.extent = extent;
    s->u.loop.kind = kind;
    s->u.loop.num_stages = stages;
    s->u.loop.body = body;
    return s;
}

static tilec_ir_stmt_t *chain(tilec_ir_stmt_t **v, int n)
{
    int i;
    for (i = 0; i + 1 < n; i++) {
        v[i]->next = v[i + 1];
    }
    return n ? v[0] : NULL;
}

/* A tiled GEMM: C = A @ B with a pipelined K loop (docs/language.md). */
static tilec_ir_module_t *build_gemm(int trans_b)
{
    tilec_ir_module_t *m = tilec_ir_module_new(&A);
    tilec_ir_kernel_t *k = tilec_ir_kernel_new(&A, "matmul");
    tilec_ir_var_t *bx = tilec_ir_var_add(&A, k, "bx", TILEC_INT32, TILEC_VAR_BLOCK);
    tilec_ir_var_t *by = tilec_ir_var_add(&A, k, "by", TILEC_INT32, TILEC_VAR_BLOCK);
    tilec_ir_var_t *kk = tilec_ir_var_add(&A, k, "k", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_buffer_t *a = buf2(k, "A", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, I32(256), I32(128));
    tilec_ir_buffer_t *b = trans_b ? buf2(k, "B", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, I32(192), I32(128))
                                   : buf2(k, "B", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, I32(128), I32(192));
    tilec_ir_buffer_t *c = buf2(k, "C", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, I32(256), I32(192));
    tilec_ir_buffer_t *as = buf2(k, "A_shared", TILEC_SCOPE_SHARED, TILEC_FLOAT16, I32(64), I32(32));
    tilec_ir_buffer_t *bs = trans_b ? buf2(k, "B_shared", TILEC_SCOPE_SHARED, TILEC_FLOAT16, I32(64), I32(32))
                                    : buf2(k, "B_shared", TILEC_SCOPE_SHARED, TILEC_FLOAT16, I32(32), I32(64));
    tilec_ir_buffer_t *cl = buf2(k, "C_local", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, I32(64), I32(64));
    tilec_ir_stmt_t *fill = tilec_ir_stmt(&A, TILEC_ST_FILL), *ca = tilec_ir_stmt(&A, TILEC_ST_COPY);
    tilec_ir_stmt_t *cb = tilec_ir_stmt(&A, TILEC_ST_COPY), *g = tilec_ir_stmt(&A, TILEC_ST_GEMM);
    tilec_ir_stmt_t *cc = tilec_ir_stmt(&A, TILEC_ST_COPY), *body[3], *inner[3];
    m->kernel = k;
    k->nparams = 3;
    k->out_mask = 1u << 2;
    k->ngrid = 2;
    k->grid[0] = I32(3);
    k->grid[1] = I32(4);
    k->block[0] = bx;
    k->block[1] = by;
    k->threads[0] = 128;
    region(&fill->u.fill.dst, cl, I32(0), 64, I32(0), 64);
    fill->u.fill.value = F32(0.0);
    region(&ca->u.copy.src, a, BIN(MUL, VAR(by), I32(64)), 64, BIN(MUL, VAR(kk), I32(32)), 32);
    region(&ca->u.copy.dst, as, I32(0), 64, I32(0), 32);
    if (trans_b) {
        region(&cb->u.copy.src, b, BIN(MUL, VAR(bx), I32(64)), 64, BIN(MUL, VAR(kk), I32(32)), 32);
        region(&cb->u.copy.dst, bs, I32(0), 64, I32(0), 32);
    } else {
        region(&cb->u.copy.src, b, BIN(MUL, VAR(kk), I32(32)), 32, BIN(MUL, VAR(bx), I32(64)), 64);
        region(&cb->u.copy.dst, bs, I32(0), 32, I32(0), 64);
    }
    g->u.gemm.a = as;
    g->u.gemm.b = bs;
    g->u.gemm.c = cl;
    g->u.gemm.trans_b = trans_b;
    g->u.gemm.policy = TILEC_POLICY_FULLROW;
    region(&cc->u.copy.src, cl, I32(0), 64, I32(0), 64);
    region(&cc->u.copy.dst, c, BIN(MUL, VAR(by), I32(64)), 64, BIN(MUL, VAR(bx), I32(64)), 64);
    inner[0] = ca;
    inner[1] = cb;
    inner[2] = g;
    body[0] = fill;
    body[1] = loop(kk, I32(4), TILEC_LOOP_PIPELINED, 3, chain(inner, 3));
    body[2] = cc;
    k->body = chain(body, 3);
    return m;
}

/* Row softmax of a [M, 64] tensor, 16 rows per block, with a reduce. */
static tilec_ir_module_t *build_softmax(void)
{
    tilec_ir_module_t *m = tilec_ir_module_new(&A);
    tilec_ir_kernel_t *k = tilec_ir_kernel_new(&A, "softmax");
    tilec_ir_var_t *bx = tilec_ir_var_add(&A, k, "bx", TILEC_INT32, TILEC_VAR_BLOCK);
    tilec_ir_var_t *i = tilec_ir_var_add(&A, k, "i", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_var_t *j = tilec_ir_var_add(&A, k, "j", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_var_t *i2 = tilec_ir_var_add(&A, k, "i2", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_var_t *j2 = tilec_ir_var_add(&A, k, "j2", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_buffer_t *x = buf2(k, "X", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, I32(1000), I32(64));
    tilec_ir_buffer_t *y = buf2(k, "Y", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, I32(1000), I32(64));
    tilec_ir_buffer_t *xs = buf2(k, "x_frag", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, I32(16), I32(64));
    tilec_ir_buffer_t *mx = buf2(k, "row_max", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, I32(16), NULL);
    tilec_ir_buffer_t *sm = buf2(k, "row_sum", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, I32(16), NULL);
    tilec_ir_stmt_t *cin = tilec_ir_stmt(&A, TILEC_ST_COPY), *rmax = tilec_ir_stmt(&A, TILEC_ST_REDUCE);
    tilec_ir_stmt_t *st1 = tilec_ir_stmt(&A, TILEC_ST_STORE), *rsum = tilec_ir_stmt(&A, TILEC_ST_REDUCE);
    tilec_ir_stmt_t *st2 = tilec_ir_stmt(&A, TILEC_ST_STORE), *cout = tilec_ir_stmt(&A, TILEC_ST_COPY);
    tilec_ir_stmt_t *body[6];
    tilec_ir_expr_t *idx[2];
    m->kernel = k;
    k->nparams = 2;
    k->out_mask = 2;
    k->ngrid = 1;
    k->grid[0] = BIN(FLOORDIV, BIN(ADD, I32(1000), I32(15)), I32(16));
    k->block[0] = bx;
    k->threads[0] = 64;
    region(&cin->u.copy.src, x, BIN(MUL, VAR(bx), I32(16)), 16, I32(0), 64);
    region(&cin->u.copy.dst, xs, I32(0), 16, I32(0), 64);
    rmax->u.reduce.op = TILEC_RED_MAX;
    rmax->u.reduce.src = xs;
    rmax->u.reduce.dst = mx;
    rmax->u.reduce.dim = 1;
    rmax->u.reduce.clear = 1;
    /* x = exp(x - max) */
    idx[0] = VAR(i);
    idx[1] = VAR(j);
    st1->u.store.buf = xs;
    st1->u.store.idx = tilec_arena_alloc(&A, sizeof idx);
    memcpy(st1->u.store.idx, idx, sizeof idx);
    st1->u.store.value = tilec_ir_unary(&A, TILEC_UN_EXP, BIN(SUB, load2(xs, VAR(i), VAR(j)), load2(mx, VAR(i), NULL)));
    rsum->u.reduce.op = TILEC_RED_SUM;
    rsum->u.reduce.src = xs;
    rsum->u.reduce.dst = sm;
    rsum->u.reduce.dim = 1;
    rsum->u.reduce.clear = 1;
    idx[0] = VAR(i2);
    idx[1] = VAR(j2);
    st2->u.store.buf = xs;
    st2->u.store.idx = tilec_arena_alloc(&A, sizeof idx);
    memcpy(st2->u.store.idx, idx, sizeof idx);
    st2->u.store.value = BIN(DIV, load2(xs, VAR(i2), VAR(j2)), load2(sm, VAR(i2), NULL));
    region(&cout->u.copy.src, xs, I32(0), 16, I32(0), 64);
    region(&cout->u.copy.dst, y, BIN(MUL, VAR(bx), I32(16)), 16, I32(0), 64);
    body[0] = cin;
    body[1] = rmax;
    body[2] = loop(i, I32(16), TILEC_LOOP_PARALLEL, 1, loop(j, I32(64), TILEC_LOOP_PARALLEL, 1, st1));
    body[3] = rsum;
    body[4] = loop(i2, I32(16), TILEC_LOOP_PARALLEL, 1, loop(j2, I32(64), TILEC_LOOP_PARALLEL, 1, st2));
    body[5] = cout;
    k->body = chain(body, 6);
    return m;
}

/* A kernel over a T.dynamic length n that uses every statement kind and
 * every expression kind (and every operator) at least once. */
static tilec_ir_module_t *build_everything(void)
{
    tilec_ir_module_t *m = tilec_ir_module_new(&A);
    tilec_ir_kernel_t *k = tilec_ir_kernel_new(&A, "everything");
    tilec_ir_var_t *n = tilec_ir_var_add(&A, k, "n", TILEC_INT32, TILEC_VAR_SYM);
    tilec_ir_var_t *bx = tilec_ir_var_add(&A, k, "bx", TILEC_INT32, TILEC_VAR_BLOCK);
    tilec_ir_var_t *i = tilec_ir_var_add(&A, k, "i", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_var_t *j = tilec_ir_var_add(&A, k, "j", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_var_t *u = tilec_ir_var_add(&A, k, "u", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_var_t *w = tilec_ir_var_add(&A, k, "w", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_var_t *t = tilec_ir_var_add(&A, k, "t", TILEC_FLOAT32, TILEC_VAR_LET);
    tilec_ir_var_t *q = tilec_ir_var_add(&A, k, "q", TILEC_INT64, TILEC_VAR_LET);
    tilec_ir_var_t *flag = tilec_ir_var_add(&A, k, "flag", TILEC_BOOL, TILEC_VAR_LET);
    tilec_ir_buffer_t *x = buf2(k, "x", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, VAR(n), NULL);
    tilec_ir_buffer_t *y = buf2(k, "y", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, BIN(MUL, VAR(n), I32(2)), I32(4));
    tilec_ir_buffer_t *cnt = buf2(k, "cnt", TILEC_SCOPE_GLOBAL, TILEC_INT32, I32(1), NULL);
    tilec_ir_buffer_t *sh = buf2(k, "s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, I32(32), NULL);
    tilec_ir_buffer_t *lo = buf2(k, "l", TILEC_SCOPE_LOCAL, TILEC_FLOAT32, I32(32), NULL);
    tilec_ir_buffer_t *acc = buf2(k, "acc", TILEC_SCOPE_VAR, TILEC_FLOAT64, I32(1), NULL);
    tilec_ir_buffer_t *fr = buf2(k, "f", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, I32(4), I32(8));
    tilec_ir_expr_t *gi = BIN(ADD, BIN(MUL, VAR(bx), I32(32)), VAR(i)), *e, *idx1[1], *c;
    tilec_ir_stmt_t *s[16], *inner[8], *st, *iff;
    int ns = 0, ni = 0, op;
    (void)j; /* declared, never bound: allowed */
    m->kernel = k;
    k->nparams = 3;
    k->out_mask = 6;
    k->ngrid = 1;
    k->grid[0] = BIN(FLOORDIV, BIN(ADD, VAR(n), I32(31)), I32(32));
    k->block[0] = bx;
    k->threads[0] = 32;
    k->threads[1] = 2;

    /* fill s = -inf; copy x -> s (boundary-safe); sync */
    s[ns] = tilec_ir_stmt(&A, TILEC_ST_FILL);
    region(&s[ns]->u.fill.dst, sh, I32(0), 32, NULL, 0);
    s[ns++]->u.fill.value = F32(-INFINITY);
    s[ns] = tilec_ir_stmt(&A, TILEC_ST_COPY);
    region(&s[ns]->u.copy.src, x, BIN(MUL, VAR(bx), I32(32)), 32, NULL, 0);
    region(&s[ns++]->u.copy.dst, sh, I32(0), 32, NULL, 0);
    s[ns++] = tilec_ir_stmt(&A, TILEC_ST_SYNC);

    /* for i in serial(32): assign t; if/else with store and atomic */
    st = tilec_ir_stmt(&A, TILEC_ST_ASSIGN);
    st->u.assign.var = t;
    idx1[0] = VAR(i);
    e = tilec_ir_load(&A, sh, idx1);
    /* every float unop on t */
    for (op = TILEC_UN_EXP; op <= TILEC_UN_CEIL; op++) {
        e = BIN(ADD, e, tilec_ir_unary(&A, (tilec_unop_t)op, load2(sh, VAR(i), NULL)));
    }
    e = BIN(ADD, e, tilec_ir_unary(&A, TILEC_UN_NEG, tilec_ir_unary(&A, TILEC_UN_ABS, F32(0.1))));
    e = BIN(POW, BIN(MAX, BIN(MIN, e, F32(1e30)), F32(-1e-30)), F32(2.0));
    e = BIN(SUB, BIN(DIV, e, F32(3.0)), F32(0x1.fffffep+127));
    st->u.assign.value = e;
    inner[ni++] = st;
    st = tilec_ir_stmt(&A, TILEC_ST_ASSIGN);
    st->u.assign.var = q;
    {
        tilec_ir_expr_t *gi64 = tilec_ir_cast(&A, TILEC_INT64, gi);
        tilec_ir_expr_t *m1 = tilec_ir_int(&A, INT64_MIN, TILEC_INT64);
        tilec_ir_expr_t *m2 = tilec_ir_int(&A, INT64_MAX, TILEC_INT64);
        st->u.assign.value = BIN(FLOORMOD, BIN(FLOORDIV, BIN(ADD, gi64, m1), tilec_ir_int(&A, -7, TILEC_INT64)),
                                 BIN(DIV, m2, tilec_ir_int(&A, 3, TILEC_INT64)));
    }
    inner[ni++] = st;
    st = tilec_ir_stmt(&A, TILEC_ST_ASSIGN);
    st->u.assign.var = flag;
    c = BIN(AND, BIN(LT, gi, VAR(n)), BIN(OR, BIN(NE, VAR(i), I32(3)), BIN(EQ, VAR(i), I32(4))));
    c = BIN(OR, c, BIN(AND, BIN(LE, VAR(i), I32(0)), BIN(AND, BIN(GT, VAR(i), I32(-1)), BIN(GE, VAR(i), I32(0)))));
    c = BIN(AND, c, tilec_ir_unary(&A, TILEC_UN_NOT, tilec_ir_int(&A, 0, TILEC_BOOL)));
    st->u.assign.value = c;
    inner[ni++] = st;
    iff = tilec_ir_stmt(&A, TILEC_ST_IF);
    iff->u.cond.cond = VAR(flag);
    {
        tilec_ir_stmt_t *sto = tilec_ir_stmt(&A, TILEC_ST_STORE), *at = tilec_ir_stmt(&A, TILEC_ST_ATOMIC);
        tilec_ir_stmt_t *at2 = tilec_ir_stmt(&A, TILEC_ST_ATOMIC);
        sto->u.store.buf = y;
        sto->u.store.idx = tilec_arena_alloc(&A, 2 * sizeof(tilec_ir_expr_t *));
        sto->u.store.idx[0] = tilec_ir_cast(&A, TILEC_INT32, VAR(q));
        sto->u.store.idx[1] = BIN(FLOORMOD, VAR(i), I32(4));
        sto->u.store.value = tilec_ir_cast(
            &A, TILEC_FLOAT16,
            tilec_ir_select(&A, BIN(GT, VAR(t), F32(0.0)), VAR(t), tilec_ir_float(&A, NAN, TILEC_FLOAT32)));
        at->u.atomic.op = TILEC_ATOMIC_ADD;
        at->u.atomic.buf = cnt;
        at->u.atomic.idx = tilec_arena_alloc(&A, sizeof(tilec_ir_expr_t *));
        at->u.atomic.idx[0] = I32(0);
        at->u.atomic.value = I32(1);
        sto->next = at;
        iff->u.cond.then = sto;
        at2->u.atomic.op = TILEC_ATOMIC_MAX;
        at2->u.atomic.buf = cnt;
        at2->u.atomic.idx = tilec_arena_alloc(&A, sizeof(tilec_ir_expr_t *));
        at2->u.atomic.idx[0] = I32(0);
        at2->u.atomic.value = tilec_ir_cast(&A, TILEC_INT32, tilec_ir_float(&A, -0.0, TILEC_FLOAT64));
        iff->u.cond.els = at2;
    }
    inner[ni++] = iff;
    s[ns++] = loop(i, I32(32), TILEC_LOOP_SERIAL, 1, chain(inner, ni));

    /* unroll / vectorized loops, local buffer, var buffer */
    st = tilec_ir_stmt(&A, TILEC_ST_STORE);
    st->u.store.buf = lo;
    st->u.store.idx = tilec_arena_alloc(&A, sizeof(tilec_ir_expr_t *));
    st->u.store.idx[0] = BIN(ADD, BIN(MUL, VAR(u), I32(8)), VAR(w));
    st->u.store.value = tilec_ir_cast(&A, TILEC_FLOAT32, tilec_ir_float(&A, 5e-324, TILEC_FLOAT64));
    s[ns++] = loop(u, I32(4), TILEC_LOOP_UNROLL, 1, loop(w, I32(8), TILEC_LOOP_VECTORIZED, 1, st));
    st = tilec_ir_stmt(&A, TILEC_ST_STORE);
    st->u.store.buf = acc;
    st->u.store.idx = tilec_arena_alloc(&A, sizeof(tilec_ir_expr_t *));
    st->u.store.idx[0] = I32(0);
    st->u.store.value = tilec_ir_float(&A, 0.1, TILEC_FLOAT64);
    s[ns++] = st;

    /* fill a fragment, reduce absmax / abssum / min without clear, cumsum */
    s[ns] = tilec_ir_stmt(&A, TILEC_ST_FILL);
    region(&s[ns]->u.fill.dst, fr, I32(1), 2, I32(0), 8);
    s[ns++]->u.fill.value = F32(-0.0);
    s[ns] = tilec_ir_stmt(&A, TILEC_ST_REDUCE);
    s[ns]->u.reduce.op = TILEC_RED_ABSMAX;
    s[ns]->u.reduce.src = fr;
    s[ns]->u.reduce.dst = lo;
    s[ns]->u.reduce.dim = 1;
    s[ns]->u.reduce.clear = 0;
    /* lo is [32]; a [4, 8] reduced along dim 1 is [4]: use a matching dst */
    {
        tilec_ir_buffer_t *r4 = buf2(k, "r4", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, I32(4), NULL);
        s[ns]->u.reduce.dst = r4;
        ns++;
        s[ns] = tilec_ir_stmt(&A, TILEC_ST_REDUCE);
        s[ns]->u.reduce.op = TILEC_RED_ABSSUM;
        s[ns]->u.reduce.src = fr;
        s[ns]->u.reduce.dst = r4;
        s[ns]->u.reduce.dim = 1;
        s[ns++]->u.reduce.clear = 1;
        s[ns] = tilec_ir_stmt(&A, TILEC_ST_REDUCE);
        s[ns]->u.reduce.op = TILEC_RED_MIN;
        s[ns]->u.reduce.src = r4;
        s[ns]->u.reduce.dst = acc;
        s[ns]->u.reduce.dim = 0;
        s[ns++]->u.reduce.clear = 1;
    }
    s[ns] = tilec_ir_stmt(&A, TILEC_ST_CUMSUM);
    s[ns]->u.cumsum.src = fr;
    s[ns]->u.cumsum.dst = fr;
    s[ns]->u.cumsum.dim = 0;
    s[ns++]->u.cumsum.reverse = 1;

    /* print a scalar and a buffer, two hints */
    s[ns] = tilec_ir_stmt(&A, TILEC_ST_PRINT);
    s[ns]->u.print.msg = tilec_arena_strdup(&A, "acc = \"x\"\n\t\x01\xc3\xa9");
    s[ns++]->u.print.value = load2(acc, I32(0), NULL);
    s[ns] = tilec_ir_stmt(&A, TILEC_ST_PRINT);
    s[ns++]->u.print.buf = fr;
    s[ns] = tilec_ir_stmt(&A, TILEC_ST_HINT);
    s[ns]->u.hint.name = "use_swizzle";
    s[ns]->u.hint.nargs = 2;
    s[ns]->u.hint.args = tilec_arena_alloc(&A, 2 * sizeof(tilec_ir_expr_t *));
    s[ns]->u.hint.args[0] = I32(10);
    s[ns]->u.hint.args[1] = tilec_ir_int(&A, -3, TILEC_INT64);
    ns++;
    s[ns] = tilec_ir_stmt(&A, TILEC_ST_HINT);
    s[ns]->u.hint.name = "annotate_layout";
    s[ns++]->u.hint.buf = sh;
    k->body = chain(s, ns);
    return m;
}

TestSuite(ir, .init = setup, .fini = teardown);

/* ---- arena ------------------------------------------------------------ */

Test(ir, arena_alignment_zero_and_growth)
{
    int i;
    size_t total = 0;
    char *big;
    for (i = 1; i < 3000; i++) {
        unsigned char *p = tilec_arena_alloc(&A, (size_t)(i % 97) + 1);
        size_t k;
        cr_assert_not_null(p);
        cr_assert_eq((uintptr_t)p % 16, 0, "allocation %d not 16-byte aligned", i);
        for (k = 0; k < (size_t)(i % 97) + 1; k++) {
            cr_assert_eq(p[k], 0);
        }
        memset(p, 0xab, (size_t)(i % 97) + 1);
        total += (size_t)(i % 97) + 1;
    }
    cr_assert_geq(A.bytes, total);
    big = tilec_arena_alloc(&A, 1 << 20);
    cr_assert_not_null(big);
    cr_assert_eq(big[0] | big[(1 << 20) - 1], 0);
    cr_assert_null(tilec_arena_alloc(&A, SIZE_MAX - 8));
    cr_assert_str_eq(tilec_arena_strdup(&A, "hello"), "hello");
    cr_assert_str_eq(tilec_arena_strndup(&A, "hello", 3), "hel");
    cr_assert_null(tilec_arena_strdup(&A, NULL));
}

Test(ir, var_and_buffer_tables_grow)
{
    tilec_ir_kernel_t *k = tilec_ir_kernel_new(&A, "k");
    char name[16];
    int i;
    for (i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "v%d", i);
        cr_assert_eq(tilec_ir_var_add(&A, k, name, TILEC_INT32, TILEC_VAR_LOOP)->id, i);
        snprintf(name, sizeof name, "b%d", i);
        cr_assert_eq(tilec_ir_buffer_add(&A, k, name, TILEC_SCOPE_SHARED, TILEC_FLOAT32, 0, NULL)->id, i);
    }
    cr_assert_eq(k->nvars, 100);
    cr_assert_eq(k->nbufs, 100);
    for (i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "v%d", i);
        cr_assert_str_eq(k->vars[i]->name, name);
        cr_assert_eq(k->bufs[i]->id, i);
    }
}

/* ---- text form -------------------------------------------------------- */

Test(ir, gemm_round_trip_and_verify)
{
    char err[256];
    tilec_ir_module_t *m = build_gemm(0);
    char *text;
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    text = round_trip(m);
    cr_assert_not_null(strstr(text, "for k in pipelined(4, stages=3) {"), "%s", text);
    cr_assert_not_null(strstr(text, "copy A[(by * 64) +: 64, (k * 32) +: 32] -> A_shared[0 +: 64, 0 +: 32]"), "%s",
                       text);
    cr_assert_not_null(strstr(text, "gemm A_shared, B_shared, C_local trans_a=0 trans_b=0 clear_accum=0 policy=fullrow"));
    cr_assert_not_null(strstr(text, "param C global float16 [256, 192] out"));
    free(text);
    m = build_gemm(1);
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    free(round_trip(m));
}

Test(ir, softmax_round_trip_and_verify)
{
    char err[256];
    tilec_ir_module_t *m = build_softmax();
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    free(round_trip(m));
}

Test(ir, everything_round_trip_and_verify)
{
    char err[256];
    tilec_ir_module_t *m = build_everything();
    char *text;
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    text = round_trip(m);
    cr_assert_not_null(strstr(text, "var n int32 sym"), "%s", text);
    cr_assert_not_null(strstr(text, "param x global float32 [n]"), "%s", text);
    cr_assert_not_null(strstr(text, "-9223372036854775808:int64"), "%s", text);
    cr_assert_not_null(strstr(text, "3.4028234663852886e+38"), "%s", text);
    cr_assert_not_null(strstr(text, "5e-324:float64"), "%s", text);
    cr_assert_not_null(strstr(text, "fill f[1 +: 2, 0 +: 8] = -0.0"), "%s", text);
    cr_assert_not_null(strstr(text, "nan"), "%s", text);
    cr_assert_not_null(strstr(text, "-inf"), "%s", text);
    cr_assert_not_null(strstr(text, "\"acc = \\\"x\\\"\\n\\t\\x01\\xc3\\xa9\""), "%s", text);
    free(text);
}

Test(ir, every_binop_and_unop_round_trips)
{
    tilec_ir_module_t *m = build_everything();
    tilec_ir_kernel_t *k = m->kernel;
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_PRINT);
    tilec_ir_expr_t *e = F32(1.0), *ie = I32(1), *be = tilec_ir_int(&A, 1, TILEC_BOOL);
    int op;
    for (op = 0; op < TILEC_BIN_COUNT; op++) {
        if (op >= TILEC_BIN_BITAND) { /* 1.1: integers only */
            ie = tilec_ir_binary(&A, (tilec_binop_t)op, ie, I32(3));
        } else if (op >= TILEC_BIN_EQ) {
            be = BIN(AND, be, tilec_ir_binary(&A, (tilec_binop_t)op, e, F32(2.5)));
        } else {
            e = tilec_ir_binary(&A, (tilec_binop_t)op, e, F32(0.5));
            ie = tilec_ir_binary(&A, (tilec_binop_t)op, ie, I32(3));
        }
    }
    for (op = 0; op < TILEC_UN_COUNT; op++) {
        if (op != TILEC_UN_NOT && op != TILEC_UN_BITCAST) { /* bitcast is 1.4: test_ir_bitcast.c */
            e = tilec_ir_unary(&A, (tilec_unop_t)op, e);
        }
    }
    s->u.print.value = tilec_ir_select(&A, tilec_ir_unary(&A, TILEC_UN_NOT, be), e, tilec_ir_cast(&A, TILEC_FLOAT32, ie));
    s->next = k->body;
    k->body = s;
    cr_assert_eq(tilec_ir_module_minor_needed(m), 1, "bitwise operators are IR 1.1");
    free(round_trip(m));
}

Test(ir, annotations_and_odd_names_round_trip)
{
    tilec_ir_module_t *m = build_gemm(0);
    tilec_ir_kernel_t *k = m->kernel;
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_PRINT);
    tilec_ir_expr_t *e;
    char *text;
    /* duplicate, reserved and non-identifier names are rewritten */
    tilec_ir_var_add(&A, k, "k", TILEC_INT32, TILEC_VAR_LET);
    tilec_ir_var_add(&A, k, "inf", TILEC_FLOAT32, TILEC_VAR_LET);
    tilec_ir_var_add(&A, k, "a b", TILEC_FLOAT32, TILEC_VAR_LET);
    tilec_ir_var_add(&A, k, "", TILEC_FLOAT32, TILEC_VAR_LET);
    tilec_ir_buffer_add(&A, k, "A", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 1, (tilec_ir_expr_t *[]){I32(4)});
    /* nodes whose dtype differs from the derived one carry annotations */
    e = BIN(ADD, I32(1), I32(2));
    e->dtype = TILEC_INT16;
    e = tilec_ir_select(&A, tilec_ir_int(&A, 7, TILEC_BOOL), e, tilec_ir_int(&A, 3, TILEC_UINT8));
    s->u.print.msg = NULL;
    s->u.print.value = e;
    s->next = k->body;
    k->body = s;
    text = round_trip(m);
    cr_assert_not_null(strstr(text, "var k_"), "%s", text);
    cr_assert_not_null(strstr(text, "var inf_ float32 let"), "%s", text);
    cr_assert_not_null(strstr(text, "var a_b float32 let"), "%s", text);
    cr_assert_not_null(strstr(text, "alloc A_6 shared float32 [4]"), "%s", text);
    cr_assert_not_null(strstr(text, "print null value select(7:bool, (1 + 2):int16, 3:uint8)"), "%s", text);
    free(text);
}

Test(ir, float_literals_exact)
{
    static const double vals[] = {0.1, -0.0, 1e-310, 5e-324, 1.7976931348623157e308, 123456789.0, 1.0 / 3.0, 2.0};
    size_t i;
    for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        tilec_ir_module_t *m = build_softmax(), *m2;
        tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_PRINT);
        char err[256], *text;
        s->u.print.value = tilec_ir_float(&A, vals[i], TILEC_FLOAT64);
        s->next = m->kernel->body;
        m->kernel->body = s;
        text = round_trip(m);
        cr_assert_eq(tilec_ir_read(&A, text, strlen(text), &m2, err, sizeof err), 0);
        cr_assert_eq(memcmp(&m2->kernel->body->u.print.value->u.f, &vals[i], sizeof(double)), 0, "value %d", (int)i);
        free(text);
    }
}

Test(ir, read_without_nul_and_with_comments)
{
    char *text = tilec_ir_print(build_gemm(0));
    size_t n = strlen(text);
    char *copy = malloc(n + 64), err[256];
    tilec_ir_module_t *m;
    memcpy(copy, text, n);
    /* not NUL-terminated: trailing garbage must not be read */
    memcpy(copy + n, "GARBAGE", 7);
    cr_assert_eq(tilec_ir_read(&A, copy, n, &m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(m->kernel->nbufs, 6);
    cr_assert_eq(tilec_ir_read(&A, copy, n + 7, &m, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "GARBAGE"), "%s", err);
    free(copy);
    free(text);
    {
        static const char *t = "tileir 1.0   # comment\n# another\nkernel k {\n var b int32 block\n"
                                " param X global float32 [4] out # out!\n grid [b = 1]\n threads 1 1 1\n"
                                " body {\n  store X[0] = 1.0\n }\n}\n";
        cr_assert_eq(tilec_ir_read(&A, t, strlen(t), &m, err, sizeof err), 0, "%s", err);
    }
    cr_assert_eq(m->kernel->out_mask, 1u);
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
}

Test(ir, reader_rejects_malformed)
{
    char deep[4096];
    int i, n = 0;
    expect_reject("", "not a tile IR text", 1);
    expect_reject("tileir 2.0\nkernel k {\n", "unsupported tile IR version 2.0", 1);
    expect_reject("tileir 1.7\nkernel k {\n", "newer than this reader", 1);
    expect_reject("tileir 1\n", "malformed version", 1);
    expect_reject("tileir 1.0\nkernel k {\n  var bx int32 block\n", "expected 'grid'", 1);
    expect_reject("tileir 1.0\nkernel k {\n  var bx int32 bloc\n", "unknown variable kind 'bloc'", 1);
    expect_reject("tileir 1.0\nkernel k {\n  var bx float128 block\n", "unknown dtype 'float128'", 1);
    expect_reject("tileir 1.0\nkernel k {\n  var bx int32 block\n  var bx int32 loop\n", "duplicate variable 'bx'", 1);
    expect_reject("tileir 1.0\nkernel k {\n  param X global float32 [n]\n", "unknown variable 'n'", 1);
    expect_reject("tileir 1.0\nkernel k {\n  alloc S shared float32 [4]\n  param X global float32 [4]\n",
                  "declared after on-chip buffers", 1);
    expect_reject("tileir 1.0\nkernel k {\n  param X global float32 [1,2,3,4,5,6,7,8,9]\n",
                  "more than 8 dimensions", 1);
    expect_reject("    store X[0] = 1.0", "rank 2 but 1 indices", 0);
    expect_reject("    store X[0, 1, 2] = 1.0", "too many indices", 0);
    expect_reject("    store Y[0, 1] = 1.0", "unknown buffer 'Y'", 0);
    expect_reject("    store X[0, j] = 1.0", "unknown variable 'j'", 0);
    expect_reject("    store X[0, 99999999999999999999] = 1.0", "integer literal out of range", 0);
    expect_reject("    store X[0, 0] = 1e999", "float literal out of range", 0);
    expect_reject("    store X[0, 0] = (1.0 @ 2.0)", "unexpected character '@'", 0);
    expect_reject("    store X[0, 0] = (1 ^ 2)", "a bitwise operator needs tileir 1.1 (the header says 1.0)", 0);
    expect_reject("    store X[0, 0] = (1.0 + 2.0", "expected ')'", 0);
    expect_reject("    store X[0, 0] = frob(1.0)", "unknown function 'frob'", 0);
    expect_reject("    store X[0, 0] = exp(1.0, 2.0)", "takes 1 argument", 0);
    expect_reject("    store X[0, 0] = 1.0:float99", "unknown dtype 'float99'", 0);
    expect_reject("    frobnicate X", "unknown statement 'frobnicate'", 0);
    expect_reject("    for i in sideways(4) {\n    }", "unknown loop kind 'sideways'", 0);
    expect_reject("    for i in pipelined(4) {\n    }", "expected ','", 0);
    expect_reject("    copy X[0 +: 4, 0 +: 4] -> X[0 +: x, 0]", "expected extent (an integer)", 0);
    expect_reject("    gemm X, X, X trans_a=0 trans_b=0 clear_accum=0 policy=diagonal", "unknown gemm policy", 0);
    expect_reject("    reduce median X -> X dim=0 clear=1", "unknown reduce op 'median'", 0);
    expect_reject("    print \"abc", "unterminated string", 0);
    expect_reject("    print \"a\\qb\" buffer X", "bad escape", 0);
    expect_reject("    store X[0, 0] = 1.0\n  }\n}\nextra", "after the kernel", 1 == 0);
    expect_reject("    threads 2 3 4", "unknown statement 'threads'", 0);
    expect_reject("tileir 1.0\nkernel k {\n  var bx int32 block\n  grid [bx = 1]\n  threads 99999999999 1 1\n",
                  "out of range", 1);
    expect_reject("tileir 1.0\nkernel k {\n  var bx int32 block\n  grid [bx = 1, bx = 1, bx = 1, bx = 1]\n",
                  "at most 3", 1);
    expect_reject("    store X[0, 0] = \x80", "unexpected byte 0x80", 0);
    /* truncated text: every prefix of a valid module is rejected cleanly */
    {
        char *text = tilec_ir_print(build_everything());
        size_t len = strlen(text), cut;
        char err[256];
        tilec_ir_module_t *m;
        for (cut = 0; cut + 4 < len; cut += 7) {
            cr_assert_eq(tilec_ir_read(&A, text, cut, &m, err, sizeof err), -1, "prefix %zu accepted", cut);
        }
        free(text);
    }
    /* nesting deeper than the limit */
    n += snprintf(deep + n, sizeof deep - (size_t)n, "    store X[0, 0] = ");
    for (i = 0; i < 600 && n + 16 < (int)sizeof deep; i++) {
        deep[n++] = '(';
    }
    deep[n] = '\0';
    expect_reject(deep, "nested too deeply", 0);
    {
        /* statement nesting: build in a heap buffer */
        size_t cap = 600 * 12 + 1, pos = 0;
        char *b = malloc(cap);
        for (i = 0; i < 600; i++) {
            memcpy(b + pos, "if true {\n", 10);
            pos += 10;
        }
        b[pos] = '\0';
        {
            char *text = malloc(strlen(PRE) + pos + 16), err[256];
            tilec_ir_module_t *m;
            strcpy(text, PRE);
            strcat(text, b);
            cr_assert_eq(tilec_ir_read(&A, text, strlen(text), &m, err, sizeof err), -1);
            cr_assert_not_null(strstr(err, "nested too deeply"), "%s", err);
            free(text);
        }
        free(b);
    }
}

Test(ir, reader_survives_garbage)
{
    /* pseudo-random mutations of a valid text never crash the reader */
    char *text = tilec_ir_print(build_everything());
    size_t len = strlen(text), i;
    char *mut = malloc(len), err[64];
    uint32_t seed = 12345;
    int round, accepted = 0;
    for (round = 0; round < 2000; round++) {
        tilec_ir_module_t *m;
        int k;
        memcpy(mut, text, len);
        for (k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            i = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            mut[i] = (char)(seed >> 16);
        }
        if (tilec_ir_read(&A, mut, len, &m, err, sizeof err) == 0) {
            char *again = tilec_ir_print(m);
            cr_assert_not_null(again);
            free(again);
            accepted++;
        } else {
            cr_assert_neq(err[0], '\0');
        }
    }
    cr_assert_lt(accepted, 2000);
    free(mut);
    free(text);
}

/* ---- verifier --------------------------------------------------------- */

static void expect_invalid(tilec_ir_module_t *m, const char *what)
{
    char err[256];
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), -1, "verifier accepted a module that should fail with '%s'", what);
    cr_assert_not_null(strstr(err, what), "message '%s' lacks '%s'", err, what);
}

/* The k-th statement of the gemm kernel: 0 fill, 1 for, 2 copy-out; the
 * loop body: 0 copy A, 1 copy B, 2 gemm. */
static tilec_ir_stmt_t *gemm_inner(tilec_ir_module_t *m, int i)
{
    tilec_ir_stmt_t *s = m->kernel->body->next->u.loop.body;
    while (i--) {
        s = s->next;
    }
    return s;
}

Test(ir, verifier_rejects)
{
    tilec_ir_module_t *m;
    tilec_ir_kernel_t *k;

    m = build_gemm(0);
    gemm_inner(m, 2)->u.gemm.trans_b = 1;
    expect_invalid(m, "gemm: K differs: 'A_shared' gives 32, 'B_shared' gives 64");

    m = build_gemm(0);
    gemm_inner(m, 2)->u.gemm.c = m->kernel->bufs[3]; /* A_shared as C */
    expect_invalid(m, "gemm: accumulator 'A_shared' is shared");

    m = build_gemm(0);
    gemm_inner(m, 2)->u.gemm.a = m->kernel->bufs[0]; /* global A */
    expect_invalid(m, "gemm: 'A' is global");

    m = build_gemm(0);
    gemm_inner(m, 0)->u.copy.dst.extent[1] = 16;
    expect_invalid(m, "copy: extents differ");

    m = build_gemm(0);
    gemm_inner(m, 0)->u.copy.dst.base[0] = I32(8);
    expect_invalid(m, "copy: destination region of 'A_shared' [8, +64) is outside");

    m = build_gemm(0);
    m->kernel->body->next->u.loop.num_stages = 0;
    expect_invalid(m, "for: pipelined loop over 'k' has num_stages 0");

    m = build_gemm(0);
    m->kernel->body->u.fill.value = tilec_ir_float(&A, 0.0, TILEC_FLOAT16);
    expect_invalid(m, "fill: value of dtype float16 stored into float32 'C_local'");

    m = build_gemm(0);
    m->kernel->body->u.fill.dst.extent[0] = 0;
    expect_invalid(m, "fill: filled region of 'C_local' has extent 0");

    m = build_gemm(0);
    m->kernel->bufs[0]->scope = TILEC_SCOPE_SHARED;
    expect_invalid(m, "parameter 'A' must be global");

    m = build_gemm(0);
    m->kernel->bufs[4]->shape[0] = tilec_ir_varref(&A, m->kernel->vars[0]);
    expect_invalid(m, "'bx' appears in a shape");

    m = build_gemm(0);
    m->kernel->ngrid = 0;
    expect_invalid(m, "grid has 0 dimensions");

    m = build_gemm(0);
    m->kernel->threads[0] = 0;
    expect_invalid(m, "threads[0] is 0");

    m = build_gemm(0);
    gemm_inner(m, 0)->u.copy.src.base[0] = BIN(MUL, VAR(m->kernel->vars[1]), F32(64.0));
    expect_invalid(m, "operands of 'mul' differ in dtype (int32 and float32)");

    m = build_gemm(0);
    gemm_inner(m, 0)->u.copy.src.base[0] = I32(INT64_C(5000000000));
    expect_invalid(m, "copy: constant 5000000000 does not fit in int32");

    m = build_softmax();
    m->kernel->body->next->u.reduce.dst = m->kernel->bufs[2]; /* x_frag */
    expect_invalid(m, "reduce: 'x_frag' has rank 2");

    m = build_softmax();
    m->kernel->body->next->u.reduce.src = m->kernel->bufs[0];
    expect_invalid(m, "reduce: 'X' is global");

    m = build_softmax();
    m->kernel->body->next->u.reduce.dim = 2;
    expect_invalid(m, "reduce: dim 2 out of range");

    m = build_softmax();
    {
        tilec_ir_stmt_t *st = m->kernel->body->next->next->u.loop.body->u.loop.body;
        st->u.store.value = tilec_ir_unary(&A, TILEC_UN_EXP, I32(1));
        expect_invalid(m, "store: 'exp' takes a float operand, not int32");
    }

    m = build_softmax();
    {
        tilec_ir_stmt_t *st = m->kernel->body->next->next->u.loop.body->u.loop.body;
        st->u.store.idx[1] = tilec_ir_varref(&A, m->kernel->vars[3]); /* i2 outside its loop */
        expect_invalid(m, "loop variable 'i2' used outside its loop");
    }

    m = build_softmax();
    {
        tilec_ir_stmt_t *st = m->kernel->body->next->next->u.loop.body->u.loop.body;
        st->kind = TILEC_ST_ASSIGN;
        st->u.assign.var = m->kernel->vars[1];
        st->u.assign.value = I32(0);
        expect_invalid(m, "assign: 'i' is a loop variable and cannot be assigned");
    }

    m = build_everything();
    k = m->kernel;
    {
        tilec_ir_stmt_t *s = k->body;
        while (s->kind != TILEC_ST_CUMSUM) {
            s = s->next;
        }
        s->u.cumsum.dst = k->bufs[4]; /* l [32] */
        expect_invalid(m, "cumsum: 'f' (rank 2) and 'l' (rank 1) must have the same shape");
    }

    m = build_everything();
    k = m->kernel;
    {
        tilec_ir_stmt_t *s = k->body;
        while (s->kind != TILEC_ST_FOR) {
            s = s->next;
        }
        s->u.loop.body->next->next->next->u.cond.cond = I32(1);
        expect_invalid(m, "if: condition has dtype int32, must be bool");
    }

    m = build_everything();
    tilec_ir_var_add(&A, m->kernel, "bx", TILEC_INT32, TILEC_VAR_LET);
    expect_invalid(m, "duplicate var name 'bx'");

    m = build_gemm(0);
    m->kernel->out_mask = 1u << 5;
    expect_invalid(m, "out_mask");

    m = build_gemm(0);
    {
        tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_STORE), *st;
        tilec_ir_var_t *t = tilec_ir_var_add(&A, m->kernel, "t", TILEC_FLOAT32, TILEC_VAR_LET);
        s->u.store.buf = m->kernel->bufs[5];
        s->u.store.idx = tilec_arena_alloc(&A, 2 * sizeof(tilec_ir_expr_t *));
        s->u.store.idx[0] = I32(0);
        s->u.store.idx[1] = I32(0);
        s->u.store.value = tilec_ir_varref(&A, t);
        s->line = 7;
        s->col = 3;
        st = m->kernel->body;
        s->next = st->next;
        st->next = s;
        expect_invalid(m, "7:3: store: variable 't' used before it is assigned");
    }
}

/* ---- passes ----------------------------------------------------------- */

/* Folds e (through the pipeline, inside a print statement) and returns it. */
static tilec_ir_expr_t *folded(tilec_ir_expr_t *e)
{
    tilec_ir_module_t *m = build_softmax();
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_PRINT);
    char err[256];
    s->u.print.value = e;
    s->next = m->kernel->body;
    m->kernel->body = s;
    cr_assert_eq(tilec_passes_run(&A, m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(m->kernel->body, s);
    return s->u.print.value;
}

static void expect_int(tilec_ir_expr_t *e, int64_t v, tilec_dtype_t t)
{
    tilec_ir_expr_t *r = folded(e);
    cr_assert_eq(r->kind, TILEC_EX_INT, "not folded to an int (kind %d)", r->kind);
    cr_assert_eq(r->u.i, v, "folded to %lld, expected %lld", (long long)r->u.i, (long long)v);
    cr_assert_eq(r->dtype, t);
}

static void expect_float(tilec_ir_expr_t *e, double v, tilec_dtype_t t)
{
    tilec_ir_expr_t *r = folded(e);
    cr_assert_eq(r->kind, TILEC_EX_FLOAT, "not folded to a float (kind %d)", r->kind);
    cr_assert(r->u.f == v || (isnan(r->u.f) && isnan(v)), "folded to %.17g, expected %.17g", r->u.f, v);
    cr_assert_eq(r->dtype, t);
}

Test(ir, const_folding)
{
    tilec_ir_expr_t *i8;
    expect_int(BIN(ADD, I32(2), BIN(MUL, I32(3), I32(4))), 14, TILEC_INT32);
    expect_int(BIN(DIV, I32(-7), I32(2)), -3, TILEC_INT32);      /* truncates */
    expect_int(BIN(FLOORDIV, I32(-7), I32(2)), -4, TILEC_INT32); /* floors */
    expect_int(BIN(FLOORMOD, I32(-7), I32(2)), 1, TILEC_INT32);
    expect_int(BIN(FLOORMOD, I32(7), I32(-2)), -1, TILEC_INT32);
    expect_int(BIN(FLOORDIV, I32(7), I32(-2)), -4, TILEC_INT32);
    expect_int(BIN(ADD, I32(INT32_MAX), I32(1)), INT32_MIN, TILEC_INT32); /* wraps */
    i8 = tilec_ir_binary(&A, TILEC_BIN_MUL, tilec_ir_int(&A, 100, TILEC_INT8), tilec_ir_int(&A, 3, TILEC_INT8));
    expect_int(i8, 44, TILEC_INT8);
    expect_int(BIN(POW, I32(3), I32(4)), 81, TILEC_INT32);
    expect_int(BIN(MAX, I32(3), BIN(MIN, I32(9), I32(5))), 5, TILEC_INT32);
    expect_int(BIN(LT, I32(3), I32(4)), 1, TILEC_BOOL);
    expect_int(tilec_ir_binary(&A, TILEC_BIN_LT, tilec_ir_int(&A, -1, TILEC_UINT64), tilec_ir_int(&A, 1, TILEC_UINT64)),
               0, TILEC_BOOL);
    expect_int(tilec_ir_cast(&A, TILEC_INT32, F32(-2.75)), -2, TILEC_INT32);
    expect_int(tilec_ir_cast(&A, TILEC_UINT8, I32(300)), 44, TILEC_UINT8);
    expect_int(tilec_ir_cast(&A, TILEC_BOOL, F32(0.5)), 1, TILEC_BOOL);
    expect_int(tilec_ir_unary(&A, TILEC_UN_NEG, I32(5)), -5, TILEC_INT32);
    expect_int(tilec_ir_select(&A, BIN(GT, F32(1.0), F32(2.0)), I32(10), I32(20)), 20, TILEC_INT32);
    expect_float(BIN(ADD, F32(0.5), F32(0.25)), 0.75, TILEC_FLOAT32);
    expect_float(BIN(DIV, F32(1.0), F32(3.0)), (double)(1.0f / 3.0f), TILEC_FLOAT32);
    expect_float(tilec_ir_cast(&A, TILEC_FLOAT16, F32(0.1f)), (double)tilec_f16_to_f32(tilec_f32_to_f16(0.1f)),
                 TILEC_FLOAT16);
    expect_float(tilec_ir_cast(&A, TILEC_FLOAT32, I32(7)), 7.0, TILEC_FLOAT32);
    expect_float(tilec_ir_unary(&A, TILEC_UN_SQRT, F32(4.0)), 2.0, TILEC_FLOAT32);
    expect_float(tilec_ir_unary(&A, TILEC_UN_EXP, F32(0.0)), 1.0, TILEC_FLOAT32);
    expect_float(BIN(MUL, F32(1e30), F32(1e30)), INFINITY, TILEC_FLOAT32);
    {
        /* not foldable: left alone */
        tilec_ir_expr_t *r = folded(BIN(DIV, I32(1), I32(0)));
        cr_assert_eq(r->kind, TILEC_EX_BINARY);
        r = folded(tilec_ir_cast(&A, TILEC_INT32, F32(1e20)));
        cr_assert_eq(r->kind, TILEC_EX_CAST);
    }
}

Test(ir, simplify_identities)
{
    tilec_ir_module_t *m = build_softmax();
    tilec_ir_kernel_t *k = m->kernel;
    tilec_ir_var_t *bx = k->vars[0];
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_PRINT), *s2 = tilec_ir_stmt(&A, TILEC_ST_PRINT);
    tilec_ir_expr_t *x = VAR(bx), *f;
    char err[256];
    s->u.print.value = BIN(ADD, BIN(MUL, I32(1), BIN(SUB, x, I32(0))), BIN(MUL, I32(0), VAR(bx)));
    f = tilec_ir_cast(&A, TILEC_FLOAT32, VAR(bx));
    s2->u.print.value = BIN(ADD, BIN(MUL, f, F32(1.0)), F32(0.0));
    s->next = s2;
    s2->next = k->body;
    k->body = s;
    cr_assert_eq(tilec_passes_run(&A, m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s->u.print.value, x);
    /* x * 1.0 folds, x + 0.0 must stay (it turns -0 into +0) */
    cr_assert_eq(s2->u.print.value->kind, TILEC_EX_BINARY);
    cr_assert_eq(s2->u.print.value->u.bin.op, TILEC_BIN_ADD);
    cr_assert_eq(s2->u.print.value->u.bin.a, f);
}

Test(ir, prune_constant_if_and_empty_loops)
{
    tilec_ir_module_t *m = build_gemm(0);
    tilec_ir_kernel_t *k = m->kernel;
    tilec_ir_stmt_t *iff = tilec_ir_stmt(&A, TILEC_ST_IF), *iff2 = tilec_ir_stmt(&A, TILEC_ST_IF);
    tilec_ir_stmt_t *sync1 = tilec_ir_stmt(&A, TILEC_ST_SYNC), *sync2 = tilec_ir_stmt(&A, TILEC_ST_SYNC);
    tilec_ir_var_t *z = tilec_ir_var_add(&A, k, "z", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_stmt_t *zero = loop(z, BIN(SUB, I32(4), I32(4)), TILEC_LOOP_SERIAL, 1, tilec_ir_stmt(&A, TILEC_ST_SYNC));
    char err[256], *text;
    int n = 0;
    tilec_ir_stmt_t *s;
    /* if (3 < 2) { sync } else { sync; sync }  -> two syncs */
    iff->u.cond.cond = BIN(LT, I32(3), I32(2));
    iff->u.cond.then = tilec_ir_stmt(&A, TILEC_ST_SYNC);
    sync1->next = sync2;
    iff->u.cond.els = sync1;
    /* if (1 == 1 and false) { sync }  -> nothing */
    iff2->u.cond.cond = BIN(AND, BIN(EQ, I32(1), I32(1)), tilec_ir_int(&A, 0, TILEC_BOOL));
    iff2->u.cond.then = tilec_ir_stmt(&A, TILEC_ST_SYNC);
    iff->next = iff2;
    iff2->next = zero;
    zero->next = k->body;
    k->body = iff;
    cr_assert_eq(tilec_passes_run(&A, m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(k->body, sync1);
    cr_assert_eq(sync2->next->kind, TILEC_ST_FILL);
    for (s = k->body; s; s = s->next) {
        n++;
    }
    cr_assert_eq(n, 5);
    text = tilec_ir_print(m);
    cr_assert_null(strstr(text, "if "), "%s", text);
    cr_assert_null(strstr(text, "for z"), "%s", text);
    free(text);
}

Test(ir, passes_verify_first)
{
    tilec_ir_module_t *m = build_gemm(0);
    char err[256];
    m->kernel->threads[2] = -1;
    cr_assert_eq(tilec_passes_run(&A, m, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "threads[2]"), "%s", err);
}

/* ---- examples through the frontend ------------------------------------ */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    cr_assert_not_null(buf);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* Compiles src with the defines of one "# tilec-test:" line (args is the
 * text after the colon, NULL for none) and checks the module. */
static void check_example(const char *path, const char *src, size_t len, const char *args)
{
    tilec_define_t defs[32];
    char *copy = strdup(args ? args : ""), *tok, *save = NULL, err[512];
    int ndefs = 0;
    tilec_diag_t d;
    tilec_frontend_result_t res;
    tilec_arena_t a;
    char *t1;
    for (tok = strtok_r(copy, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
        char *def = NULL, *eq;
        if (strcmp(tok, "-D") == 0) {
            def = strtok_r(NULL, " \t\r", &save);
        } else if (strncmp(tok, "-D", 2) == 0) {
            def = tok + 2;
        }
        if (!def || !(eq = strchr(def, '=')) || ndefs == 32) {
            continue;
        }
        *eq = '\0';
        defs[ndefs].name = def;
        defs[ndefs].value = eq + 1;
        ndefs++;
    }
    tilec_arena_init(&a);
    memset(&res, 0, sizeof res);
    tilec_diag_init(&d, path, src, len);
    cr_assert_eq(tilec_frontend_compile(&a, &d, path, src, len, NULL, defs, ndefs, &res), 0,
                 "%s [%s]: frontend failed: %s", path, args ? args : "", tilec_diag_text(&d));
    cr_assert_not_null(res.module);
    cr_assert_eq(tilec_ir_verify(res.module, err, sizeof err), 0, "%s [%s]: %s", path, args ? args : "", err);
    {
        /* round trip in the test's own arena A, then the passes */
        tilec_ir_module_t *m2;
        char *t2;
        t1 = tilec_ir_print(res.module);
        cr_assert_not_null(t1);
        cr_assert_eq(tilec_ir_read(&a, t1, strlen(t1), &m2, err, sizeof err), 0, "%s: read: %s\n%s", path, err, t1);
        t2 = tilec_ir_print(m2);
        cr_assert_str_eq(t1, t2, "%s: round trip differs", path);
        free(t2);
        cr_assert_eq(tilec_passes_run(&a, m2, err, sizeof err), 0, "%s [%s]: passes: %s", path, args ? args : "",
                     err);
        free(t1);
        t1 = tilec_ir_print(m2);
        cr_assert_eq(tilec_ir_read(&a, t1, strlen(t1), &m2, err, sizeof err), 0, "%s: read after passes: %s", path,
                     err);
        t2 = tilec_ir_print(m2);
        cr_assert_str_eq(t1, t2, "%s: round trip after passes differs", path);
        free(t2);
        free(t1);
    }
    tilec_arena_destroy(&a);
    free(copy);
}

Test(ir, examples_compile_verify_and_round_trip)
{
    const char *dir = "examples";
    DIR *dp = opendir(dir);
    struct dirent *de;
    int nfiles = 0;
    if (!dp) {
        dir = "../examples";
        dp = opendir(dir);
    }
    if (!dp) {
        cr_skip_test("no examples/ directory next to the working directory");
    }
    while ((de = readdir(dp)) != NULL) {
        char path[1024];
        size_t len, n = strlen(de->d_name);
        char *src, *line;
        int nlines = 0;
        if (n < 4 || strcmp(de->d_name + n - 3, ".py") != 0) {
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        src = slurp(path, &len);
        cr_assert_not_null(src, "cannot read %s", path);
        for (line = src; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            if (strncmp(line, "# tilec-test:", 13) == 0) {
                const char *end = strchr(line, '\n');
                char *args = strndup(line + 13, end ? (size_t)(end - line - 13) : strlen(line + 13));
                check_example(path, src, len, args);
                free(args);
                nlines++;
            }
        }
        if (nlines == 0) {
            check_example(path, src, len, NULL);
        }
        free(src);
        nfiles++;
    }
    closedir(dp);
    cr_assert_gt(nfiles, 0);
}

/* ---- IR 1.1 ----------------------------------------------------------- */

/* tests/ir/gemm_pipelined.tir: a hand-lowered 2-stage GEMM that uses every
 * 1.1 construct (attributes, both layout kinds with a swizzle and a
 * padding, mbarriers, copy_async/commit/wait, barrier, gemm stage indices,
 * bitwise operators).  Read, verified and printed, it is the same text. */
static tilec_ir_module_t *read_fixture(const char *path, char **text)
{
    char err[512];
    size_t len;
    tilec_ir_module_t *m = NULL;
    char *src = slurp(path, &len);
    if (!src) {
        char alt[256];
        snprintf(alt, sizeof alt, "../%s", path);
        src = slurp(alt, &len);
    }
    cr_assert_not_null(src, "cannot read %s", path);
    cr_assert_eq(tilec_ir_read(&A, src, len, &m, err, sizeof err), 0, "%s: %s", path, err);
    if (text) {
        *text = src;
    } else {
        free(src);
    }
    return m;
}

static tilec_ir_stmt_t *find_stmt(tilec_ir_stmt_t *s, tilec_stmt_kind_t kind)
{
    for (; s; s = s->next) {
        tilec_ir_stmt_t *r = NULL;
        if (s->kind == kind) {
            return s;
        }
        if (s->kind == TILEC_ST_FOR) {
            r = find_stmt(s->u.loop.body, kind);
        } else if (s->kind == TILEC_ST_IF) {
            r = find_stmt(s->u.cond.then, kind);
        }
        if (r) {
            return r;
        }
    }
    return NULL;
}

Test(ir, ir11_fixture_round_trips_and_verifies)
{
    char err[512], *text, *out;
    tilec_ir_module_t *m = read_fixture("tests/ir/gemm_pipelined.tir", &text);
    tilec_ir_kernel_t *k = m->kernel;
    const tilec_ir_attr_t *at;
    tilec_ir_stmt_t *g;
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    out = tilec_ir_print(m);
    cr_assert_str_eq(out, text);
    free(out);
    free(round_trip(m));
    /* the in-memory model behind the text */
    cr_assert_eq(m->version_minor, 1);
    cr_assert_eq(tilec_ir_module_minor_needed(m), 1);
    cr_assert_eq(k->nmbars, 1);
    cr_assert_eq(k->mbars[0]->size, 2);
    cr_assert_eq(k->mbars[0]->arrive, 1);
    cr_assert_eq(k->bufs[3]->layout->kind, TILEC_LAYOUT_SMEM);
    cr_assert_eq(k->bufs[3]->layout->offset, 0);
    cr_assert_eq(k->bufs[4]->layout->size, 9216);
    cr_assert_eq(k->bufs[5]->layout->nlocal, 32);
    cr_assert_eq(k->bufs[6]->layout->replicate, 128);
    at = tilec_ir_attr_get(k->bufs[4]->nattrs, k->bufs[4]->attrs, "cuda.bias");
    cr_assert(at && at->kind == TILEC_ATTR_INT && at->i == -3);
    at = tilec_ir_attr_get(k->bufs[4]->nattrs, k->bufs[4]->attrs, "cuda.ratio");
    cr_assert(at && at->kind == TILEC_ATTR_FLOAT && at->f == 0.5);
    g = find_stmt(k->body, TILEC_ST_GEMM);
    cr_assert(g && g->u.gemm.a_lead && g->u.gemm.b_lead);
    at = tilec_ir_attr_get(g->nattrs, g->attrs, "lower.mma_shape");
    cr_assert(at && at->kind == TILEC_ATTR_TUPLE && at->n == 3 && at->tuple[2] == 16);
    cr_assert_eq(find_stmt(k->body, TILEC_ST_ASYNC_WAIT)->u.wait.n, 1);
    free(text);
}

Test(ir, ir11_version_rule)
{
    char err[256], *t;
    tilec_ir_module_t *m = build_gemm(0), *m2;
    tilec_ir_stmt_t *s = m->kernel->body;
    t = tilec_ir_print(m);
    cr_assert_eq(strncmp(t, "tileir 1.0\n", 11), 0, "%.12s", t);
    /* a 1.1 header on a module that needs nothing newer reads back and prints 1.0 */
    t[9] = '1';
    cr_assert_eq(tilec_ir_read(&A, t, strlen(t), &m2, err, sizeof err), 0, "%s", err);
    cr_assert_eq(m2->version_minor, 1);
    cr_assert_eq(tilec_ir_module_minor_needed(m2), 0);
    free(t);
    t = tilec_ir_print(m2);
    cr_assert_eq(strncmp(t, "tileir 1.0\n", 11), 0, "%.12s", t);
    free(t);
    /* one attribute makes it 1.1 */
    cr_assert_eq(tilec_ir_attr_set_int(&A, &s->nattrs, &s->attrs, "cuda.x", 7), 0);
    cr_assert_eq(tilec_ir_attr_set_int(&A, &s->nattrs, &s->attrs, "cuda.x", 8), 0); /* replaces */
    cr_assert_eq(s->nattrs, 1);
    cr_assert_eq(tilec_ir_module_minor_needed(m), 1);
    t = round_trip(m);
    cr_assert_not_null(strstr(t, "attrs {cuda.x = 8}"), "%s", t);
    free(t);
}

Test(ir, ir11_reader_rejects)
{
    static const char *const P11 = "tileir 1.1\nkernel k {\n  var bx int32 block\n  var i int32 loop\n"
                                   "  param X global float32 [16, 4]\n";
    char text[2048];
    /* 1.1 constructs under a 1.0 header */
    expect_reject("    barrier", "barrier needs tileir 1.1 (the header says 1.0)", 0);
    expect_reject("    async_wait 0", "async_wait needs tileir 1.1", 0);
    expect_reject("    sync attrs {cuda.x = 1}", "'attrs' needs tileir 1.1", 0);
    expect_reject("tileir 1.0\nkernel k {\n  alloc S shared float32 [4] layout smem \"x\"() offset=0 size=16 addr=_i0\n",
                  "'layout' needs tileir 1.1", 1);
    expect_reject("tileir 1.0\nkernel k {\n  mbarrier b[1] arrive=1\n", "'mbarrier' needs tileir 1.1", 1);
    /* malformed 1.1 */
    snprintf(text, sizeof text, "%s  grid [bx = 1]\n  threads 1 1 1\n  body {\n    sync attrs {x = 1}\n  }\n}\n", P11);
    expect_reject(text, "has no namespace", 1);
    snprintf(text, sizeof text, "%s  grid [bx = 1]\n  threads 1 1 1\n  body {\n    sync attrs {a.b = 1, a.b = 2}\n  }\n}\n",
             P11);
    expect_reject(text, "duplicate attribute 'a.b'", 1);
    snprintf(text, sizeof text, "%s  grid [bx = 1]\n  threads 1 1 1\n  body {\n    sync attrs {a.b = }\n  }\n}\n", P11);
    expect_reject(text, "expected an attribute value", 1);
    snprintf(text, sizeof text, "%s  alloc S shared float32 [4] layout smem \"x\"() offset=0 size=16 addr=(_i0 + bx)\n",
             P11);
    expect_reject(text, "unknown variable 'bx' in a layout", 1);
    snprintf(text, sizeof text, "%s  alloc S shared float32 [4] layout tiles \"x\"() offset=0\n", P11);
    expect_reject(text, "unknown layout kind 'tiles'", 1);
    snprintf(text, sizeof text, "%s  grid [bx = 1]\n  threads 1 1 1\n  body {\n    barrier_arrive nb[0]\n  }\n}\n", P11);
    expect_reject(text, "unknown mbarrier 'nb'", 1);
    snprintf(text, sizeof text, "%s  mbarrier b[2] arrive=1\n  mbarrier b[2] arrive=1\n", P11);
    expect_reject(text, "duplicate mbarrier 'b'", 1);
    snprintf(text, sizeof text, "%s  grid [bx = 1]\n  threads 1 1 1\n  body {\n    barrier_arrive nb[0] expect_tx 16\n  }\n}\n",
             P11);
    expect_reject(text, "unknown mbarrier 'nb'", 1);
    snprintf(text, sizeof text,
             "%s  alloc S shared float32 [4]\n  grid [bx = 1]\n  threads 1 1 1\n  body {\n"
             "    copy_async S[0 +: 4] <- X[0, 0 +: 4] mbarrier nb[0]\n  }\n}\n", P11);
    expect_reject(text, "unknown mbarrier 'nb'", 1);
    snprintf(text, sizeof text,
             "%s  alloc S fragment float32 [4, 4]\n  grid [bx = 1]\n  threads 1 1 1\n  body {\n"
             "    gemm S[0], S, S trans_a=0 trans_b=0 clear_accum=0 policy=square\n  }\n}\n", P11);
    expect_reject(text, "takes no leading indices", 1);
}

Test(ir, ir11_verifier_rejects)
{
    tilec_ir_module_t *m = read_fixture("tests/ir/gemm_pipelined.tir", NULL);
    tilec_ir_kernel_t *k = m->kernel;
    tilec_ir_buffer_t *As = k->bufs[3], *Bs = k->bufs[4], *Cl = k->bufs[5];
    tilec_ir_layout_t *la = As->layout, *lc = Cl->layout;
    tilec_ir_stmt_t *g = find_stmt(k->body, TILEC_ST_GEMM), *ca = find_stmt(k->body, TILEC_ST_COPY_ASYNC);
    tilec_ir_stmt_t *w = find_stmt(k->body, TILEC_ST_ASYNC_WAIT), *arr = find_stmt(k->body, TILEC_ST_MBAR_ARRIVE);
    tilec_ir_expr_t *saved;
    char err[512];
    int64_t tup[2] = {2, 0};

    /* REGS: a register holding two elements, a thread out of range */
    saved = lc->local;
    lc->local = I32(0);
    expect_invalid(m, "layout of 'C_l' is not injective: elements [0, 0] and [2, 0] share thread/register slot 0");
    lc->local = saved;
    lc->threads = 64;
    expect_invalid(m, "in thread 64, register 0; threads=64 nlocal=32");
    lc->threads = 128;
    /* SMEM: the swizzle without the row term collides; an address past the end */
    saved = la->addr;
    la->addr = BIN(BITXOR, VAR(la->ivar[2]), I32(1));
    expect_invalid(m, "layout of 'A_s' is not injective");
    la->addr = BIN(ADD, saved, I32(4096));
    expect_invalid(m, "at address 4096, outside its 8192 bytes");
    la->addr = saved;
    /* a kernel variable inside a layout */
    la->addr = BIN(ADD, saved, VAR(k->vars[0]));
    expect_invalid(m, "layout expression uses 'bx'");
    la->addr = saved;
    /* SMEM plan: overlapping buffers unless marked as a reuse */
    Bs->layout->offset = 4096;
    expect_invalid(m, "shared buffers 'A_s' [0, 8192) and 'B_s' [4096, 13312) overlap");
    cr_assert_eq(tilec_ir_attr_set_str(&A, &Bs->nattrs, &Bs->attrs, "lower.reuse_of", "A_s"), 0);
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tilec_ir_attr_set_str(&A, &Bs->nattrs, &Bs->attrs, "lower.reuse_of", "nothing"), 0);
    expect_invalid(m, "lower.reuse_of names 'nothing', which is not another shared buffer");
    Bs->nattrs = 0;
    Bs->layout->offset = 8192;
    /* a REGS layout on a shared buffer */
    As->layout = lc;
    expect_invalid(m, "'A_s' is shared; a regs layout needs a fragment or local buffer");
    As->layout = la;
    /* attribute types of lower.* keys; unknown lower keys; other namespaces pass */
    cr_assert_eq(tilec_ir_attr_set_tuple(&A, &g->nattrs, &g->attrs, "lower.warp", tup, 2), 0);
    expect_invalid(m, "gemm: attribute 'lower.warp' must be >= 1");
    cr_assert_eq(tilec_ir_attr_set_int(&A, &g->nattrs, &g->attrs, "lower.warp", 4), 0);
    expect_invalid(m, "attribute 'lower.warp' must be a tuple of 2 ints");
    tup[1] = 2;
    cr_assert_eq(tilec_ir_attr_set_tuple(&A, &g->nattrs, &g->attrs, "lower.warp", tup, 2), 0);
    cr_assert_eq(tilec_ir_attr_set_int(&A, &g->nattrs, &g->attrs, "lower.frobs", 1), 0);
    expect_invalid(m, "unknown attribute 'lower.frobs'");
    g->nattrs--;
    cr_assert_eq(tilec_ir_attr_set_int(&A, &g->nattrs, &g->attrs, "vendorx.frobs", 1), 0);
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    /* gemm on a staged buffer without its stage index */
    saved = g->u.gemm.a_lead[0];
    g->u.gemm.a_lead = NULL;
    expect_invalid(m, "A operand 'A_s' has rank 3; give its 1 leading indices");
    g->u.gemm.a_lead = g->u.gemm.b_lead;
    g->u.gemm.a_lead[0] = I32(2);
    expect_invalid(m, "leading index 2 of 'A_s' is outside dimension 0 of size 2");
    g->u.gemm.a_lead[0] = saved;
    /* async copies go from global to shared */
    ca->u.copy.dst.buf = Cl;
    expect_invalid(m, "copy_async: ");
    ca->u.copy.dst.buf = As;
    w->u.wait.n = -1;
    expect_invalid(m, "async_wait -1: the count must be >= 0");
    w->u.wait.n = 1;
    saved = arr->u.mbar.idx;
    arr->u.mbar.idx = I32(2);
    expect_invalid(m, "index 2 is outside mbarrier 'full' of size 2");
    arr->u.mbar.idx = saved;
    /* an arrival's transaction bytes, a copy bound to a barrier */
    arr->u.mbar.tx = I32(1 << 20);
    expect_invalid(m, "expect_tx 1048576: the bytes of one arrival must be in 0..2^20-1");
    arr->u.mbar.tx = I32(8192);
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    arr->u.mbar.tx = NULL;
    ca->u.copy.bar = arr->u.mbar.bar;
    expect_invalid(m, "copy_async into 'A_s' names an mbarrier without an index");
    ca->u.copy.bar_idx = I32(3);
    expect_invalid(m, "index 3 is outside mbarrier 'full' of size 2");
    ca->u.copy.bar_idx = I32(1);
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    ca->u.copy.bar = NULL;
    ca->u.copy.bar_idx = NULL;
    /* placeholders stay inside their layout */
    saved = arr->u.mbar.idx;
    arr->u.mbar.idx = VAR(lc->ivar[0]);
    expect_invalid(m, "layout placeholder '_i0' used outside its layout");
    arr->u.mbar.idx = saved;
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
}

/* ---- walker and integer evaluator ------------------------------------- */

static int count_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    (void)s;
    (*(int *)w->user)++;
    return TILEC_WALK_CONTINUE;
}

/* removes every barrier, puts a sync before every async_commit, replaces
 * async_wait by two barriers */
static int edit_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    if (s->kind == TILEC_ST_BARRIER) {
        tilec_ir_walk_remove(w);
    } else if (s->kind == TILEC_ST_ASYNC_COMMIT) {
        tilec_ir_walk_insert_before(w, tilec_ir_stmt(&A, TILEC_ST_SYNC));
    } else if (s->kind == TILEC_ST_ASYNC_WAIT) {
        tilec_ir_stmt_t *a = tilec_ir_stmt(&A, TILEC_ST_BARRIER);
        a->next = tilec_ir_stmt(&A, TILEC_ST_BARRIER);
        tilec_ir_walk_replace(w, a);
    }
    return TILEC_WALK_CONTINUE;
}

/* k -> 3 everywhere (expr_post replaces slots) */
static int subst_k(tilec_ir_walk_t *w, tilec_ir_expr_t **slot)
{
    if ((*slot)->kind == TILEC_EX_VAR && (*slot)->u.var == (tilec_ir_var_t *)w->user) {
        *slot = I32(3);
    }
    return TILEC_WALK_CONTINUE;
}

static int stop_at_gemm(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    (*(int *)w->user)++;
    return s->kind == TILEC_ST_GEMM ? TILEC_WALK_STOP : TILEC_WALK_CONTINUE;
}

static int count_kind(tilec_ir_stmt_t *s, tilec_stmt_kind_t kind)
{
    int n = 0;
    for (; s; s = s->next) {
        n += s->kind == kind;
        if (s->kind == TILEC_ST_FOR) {
            n += count_kind(s->u.loop.body, kind);
        } else if (s->kind == TILEC_ST_IF) {
            n += count_kind(s->u.cond.then, kind) + count_kind(s->u.cond.els, kind);
        }
    }
    return n;
}

Test(ir, walk_visits_and_edits)
{
    tilec_ir_module_t *m = read_fixture("tests/ir/gemm_pipelined.tir", NULL);
    tilec_ir_kernel_t *k = m->kernel;
    tilec_ir_walk_t w;
    char err[512], *t;
    int n = 0;
    memset(&w, 0, sizeof w);
    w.stmt_pre = count_stmt;
    w.user = &n;
    cr_assert_eq(tilec_ir_walk_kernel(&w, k), 0);
    cr_assert_eq(n, 19, "statements visited: %d", n);
    n = 0;
    w.stmt_pre = stop_at_gemm;
    cr_assert_eq(tilec_ir_walk_kernel(&w, k), 1);
    cr_assert_eq(n, 13, "statements before the gemm, inclusive: %d", n);
    memset(&w, 0, sizeof w);
    w.stmt_pre = edit_stmt;
    cr_assert_eq(tilec_ir_walk_kernel(&w, k), 0);
    cr_assert_eq(count_kind(k->body, TILEC_ST_BARRIER), 4); /* 2 removed, 2 x 2 added */
    cr_assert_eq(count_kind(k->body, TILEC_ST_SYNC), 2);
    cr_assert_eq(count_kind(k->body, TILEC_ST_ASYNC_WAIT), 0);
    cr_assert_eq(count_kind(k->body, TILEC_ST_ASYNC_COMMIT), 2);
    memset(&w, 0, sizeof w);
    w.expr_post = subst_k;
    w.user = k->vars[2];
    cr_assert_eq(tilec_ir_walk_kernel(&w, k), 0);
    t = tilec_ir_print(m);
    cr_assert_not_null(strstr(t, "gemm A_s[(3 % 2)], B_s[(3 % 2)]"), "%s", t);
    cr_assert_not_null(strstr(t, "    sync\n    async_commit\n    for k"), "%s", t);
    cr_assert_null(strstr(t, "async_wait"), "%s", t);
    free(t);
    /* the edited module is still valid IR */
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
}

static int bind_two(void *ctx, const tilec_ir_var_t *v, int64_t *out)
{
    (void)ctx;
    if (strcmp(v->name, "x") != 0) {
        return -1;
    }
    *out = 2;
    return 0;
}

Test(ir, eval_int)
{
    tilec_ir_kernel_t *k = tilec_ir_kernel_new(&A, "e");
    tilec_ir_var_t *x = tilec_ir_var_add(&A, k, "x", TILEC_INT32, TILEC_VAR_SYM);
    tilec_ir_var_t *y = tilec_ir_var_add(&A, k, "y", TILEC_INT32, TILEC_VAR_SYM);
    int64_t v;
    tilec_ir_expr_t *e = BIN(FLOORDIV, BIN(SUB, I32(-7), VAR(x)), I32(2)); /* (-7 - 2) // 2 = -5 */
    cr_assert_eq(tilec_ir_eval_int(e, bind_two, NULL, &v), 0);
    cr_assert_eq(v, -5);
    cr_assert_eq(tilec_ir_eval_int(BIN(FLOORMOD, I32(-7), VAR(x)), bind_two, NULL, &v), 0);
    cr_assert_eq(v, 1);
    cr_assert_eq(tilec_ir_eval_int(BIN(SHL, I32(1), I32(31)), NULL, NULL, &v), 0);
    cr_assert_eq(v, INT32_MIN); /* wraps to int32 */
    cr_assert_eq(tilec_ir_eval_int(BIN(SHR, I32(-16), I32(2)), NULL, NULL, &v), 0);
    cr_assert_eq(v, -4); /* arithmetic on signed */
    cr_assert_eq(tilec_ir_eval_int(BIN(SHR, tilec_ir_int(&A, 0xfffffff0, TILEC_UINT32), tilec_ir_int(&A, 4, TILEC_UINT32)),
                                   NULL, NULL, &v), 0);
    cr_assert_eq(v, 0x0fffffff); /* logical on unsigned */
    cr_assert_eq(tilec_ir_eval_int(BIN(BITXOR, BIN(BITAND, I32(12), I32(10)), BIN(BITOR, I32(1), I32(4))), NULL, NULL,
                                   &v), 0);
    cr_assert_eq(v, (12 & 10) ^ (1 | 4));
    cr_assert_eq(tilec_ir_eval_int(BIN(MUL, I32(65536), I32(65536)), NULL, NULL, &v), 0);
    cr_assert_eq(v, 0);
    cr_assert_eq(tilec_ir_eval_int(tilec_ir_select(&A, BIN(LT, VAR(x), I32(3)), I32(10), I32(20)), bind_two, NULL, &v), 0);
    cr_assert_eq(v, 10);
    /* what it cannot answer */
    cr_assert_eq(tilec_ir_eval_int(BIN(ADD, VAR(y), I32(1)), bind_two, NULL, &v), -1);
    cr_assert_eq(tilec_ir_eval_int(BIN(DIV, I32(1), I32(0)), NULL, NULL, &v), -1);
    cr_assert_eq(tilec_ir_eval_int(BIN(SHL, I32(1), I32(32)), NULL, NULL, &v), -1);
    cr_assert_eq(tilec_ir_eval_int(F32(1.0), NULL, NULL, &v), -1);
}

/* ---- checked passes (tilec/ir_check.h) -------------------------------- */

Test(ir, check_pass_verifies_round_trips_and_names_the_pass)
{
    char err[512];
    tilec_ir_module_t *m = build_gemm(0);
    tilec_ir_var_t *stray = tilec_arena_alloc(&A, sizeof *stray);
    setenv("TILEC_IR_ROUNDTRIP", "1", 1);
    cr_assert(tilec_ir_roundtrip_wanted());
    cr_assert_eq(tilec_ir_check_pass("simplify", m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tilec_ir_roundtrip(m, err, sizeof err), 0, "%s", err);
    /* a variable outside the kernel's table: invalid, and it cannot round-trip */
    stray->name = "stray";
    stray->id = 99;
    gemm_inner(m, 0)->u.copy.src.base[0] = VAR(stray);
    cr_assert_eq(tilec_ir_check_pass("simplify", m, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "(after pass simplify)"), "%s", err);
    cr_assert_eq(tilec_ir_roundtrip(m, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "round trip: the printed module does not read back"), "%s", err);
    unsetenv("TILEC_IR_ROUNDTRIP");
    cr_assert(!tilec_ir_roundtrip_wanted());
}

Test(ir, log_ir_traces_every_pass, .init = cr_redirect_stderr)
{
    char err[512];
    tilec_arena_t a;
    tilec_ir_module_t *m;
    setup(); /* the test's own .init replaced the suite's */
    tilec_arena_init(&a);
    m = build_gemm(0);
    setenv("TILEC_LOG", "launch,ir", 1);
    cr_assert(tilec_ir_log_wanted());
    cr_assert_eq(tilec_passes_run(&a, m, err, sizeof err), 0, "%s", err);
    unsetenv("TILEC_LOG");
    fflush(stderr);
    tilec_arena_destroy(&a);
    {
        FILE *f = cr_get_redirected_stderr();
        char buf[65536];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        cr_assert_not_null(strstr(buf, "tilec[ir]: == before passes\ntileir 1.0\nkernel matmul {"), "%s", buf);
        cr_assert_not_null(strstr(buf, "tilec[ir]: == after simplify\ntileir 1.0\n"), "%s", buf);
        cr_assert_not_null(strstr(buf, "tilec[ir]: == after prune\ntileir 1.0\n"), "%s", buf);
    }
}
