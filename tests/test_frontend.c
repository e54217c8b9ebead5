/*
 * tests/test_frontend.c — the frontend evaluator (frontend/eval.c and
 * friends): small tile programs compiled from strings, checked on the
 * structure of the IR they produce (grid, parameters, buffers, loop kinds,
 * copy regions, typing of mixed expressions, -D handling, symbols,
 * out_idx), and on the diagnostics of semantic errors (position and text of
 * the first line).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "passes.h"

#define HDR "import tilelang\nimport tilelang.language as T\n\n"

typedef struct res {
    tilec_arena_t a;
    tilec_diag_t d;
    tilec_frontend_result_t r;
    int rc;
    char *src;
} res_t;

static res_t *compile_e(const char *src, const char *entry, int ndefs, const tilec_define_t *defs)
{
    res_t *x = calloc(1, sizeof *x);
    cr_assert(x);
    x->src = strdup(src);
    tilec_arena_init(&x->a);
    tilec_diag_init(&x->d, "t.py", x->src, strlen(x->src));
    x->rc = tilec_frontend_compile(&x->a, &x->d, "t.py", x->src, strlen(x->src), entry, defs, ndefs, &x->r);
    return x;
}

static res_t *compile_ok(const char *src, int ndefs, const tilec_define_t *defs)
{
    res_t *x = compile_e(src, NULL, ndefs, defs);
    cr_assert_eq(x->rc, 0, "compile failed: %s", tilec_diag_text(&x->d));
    cr_assert(x->r.module && x->r.module->kernel);
    {
        char err[512];
        cr_assert_eq(tilec_ir_verify(x->r.module, err, sizeof err), 0, "verifier: %s", err);
    }
    return x;
}

static void done(res_t *x)
{
    tilec_arena_destroy(&x->a);
    free(x->src);
    free(x);
}

/* Compiles src expecting an error whose first line contains `msg`, at `line`
 * (0: any line). */
static void expect_err_e(const char *src, const char *entry, int ndefs, const tilec_define_t *defs, int line,
                         const char *msg)
{
    res_t *x = compile_e(src, entry, ndefs, defs);
    const char *t = tilec_diag_text(&x->d);
    char first[1024];
    size_t n = strcspn(t, "\n");
    cr_assert_eq(x->rc, -1, "expected an error containing '%s'", msg);
    cr_assert(n < sizeof first);
    memcpy(first, t, n);
    first[n] = '\0';
    cr_assert(strstr(first, msg), "diagnostic '%s' does not contain '%s'", first, msg);
    if (line > 0) {
        char pre[32];
        snprintf(pre, sizeof pre, "t.py:%d:", line);
        cr_assert(strncmp(first, pre, strlen(pre)) == 0, "diagnostic '%s' is not at line %d", first, line);
    }
    cr_assert_null(x->r.module);
    done(x);
}

static void expect_err(const char *src, int line, const char *msg)
{
    expect_err_e(src, NULL, 0, NULL, line, msg);
}

static tilec_ir_kernel_t *K(res_t *x) { return x->r.module->kernel; }

static tilec_ir_buffer_t *buf(tilec_ir_kernel_t *k, const char *name)
{
    for (int i = 0; i < k->nbufs; i++)
        if (!strcmp(k->bufs[i]->name, name)) return k->bufs[i];
    cr_assert_fail("no buffer %s", name);
    return NULL;
}

static int64_t cint(const tilec_ir_expr_t *e)
{
    int64_t v = -999;
    cr_assert(tilec_ir_is_const_int(e, &v), "not a constant int (kind %d)", e ? (int)e->kind : -1);
    return v;
}

static tilec_ir_stmt_t *nth(tilec_ir_stmt_t *s, int n)
{
    while (s && n-- > 0) s = s->next;
    cr_assert(s, "statement missing");
    return s;
}

static int count(tilec_ir_stmt_t *s)
{
    int n = 0;
    for (; s; s = s->next) n++;
    return n;
}

/* Count statements of a kind anywhere in a block. */
static int count_kind(tilec_ir_stmt_t *s, tilec_stmt_kind_t kind)
{
    int n = 0;
    for (; s; s = s->next) {
        if (s->kind == kind) n++;
        if (s->kind == TILEC_ST_FOR) n += count_kind(s->u.loop.body, kind);
        if (s->kind == TILEC_ST_IF) n += count_kind(s->u.cond.then, kind) + count_kind(s->u.cond.els, kind);
    }
    return n;
}

static const char *GEMM =
    HDR
    "@tilelang.jit(out_idx=[-1])\n"
    "def matmul(M, N, K, block_M=64, block_N=32, block_K=16, dtype=\"float16\", accum_dtype=\"float\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "            A_shared = T.alloc_shared((block_M, block_K), dtype)\n"
    "            B_shared = T.alloc_shared((block_K, block_N), dtype)\n"
    "            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)\n"
    "            T.clear(C_local)\n"
    "            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):\n"
    "                T.copy(A[by * block_M, k * block_K], A_shared)\n"
    "                T.copy(B[k * block_K, bx * block_N], B_shared)\n"
    "                T.gemm(A_shared, B_shared, C_local)\n"
    "            T.copy(C_local, C[by * block_M, bx * block_N])\n"
    "    return main\n";

Test(frontend, gemm_structure)
{
    tilec_define_t defs[] = {{"M", "256"}, {"N", "100"}, {"K", "64"}};
    res_t *x = compile_ok(GEMM, 3, defs);
    tilec_ir_kernel_t *k = K(x);
    cr_assert_str_eq(k->name, "matmul");
    cr_assert_str_eq(x->r.entry, "matmul");
    cr_assert_eq(k->nparams, 3);
    cr_assert_eq(k->nbufs, 6);
    cr_assert_str_eq(k->bufs[0]->name, "A");
    cr_assert_eq(k->bufs[0]->scope, TILEC_SCOPE_GLOBAL);
    cr_assert_eq(k->bufs[0]->dtype, TILEC_FLOAT16);
    cr_assert_eq(cint(k->bufs[0]->shape[0]), 256);
    cr_assert_eq(cint(k->bufs[0]->shape[1]), 64);
    cr_assert_eq(buf(k, "A_shared")->scope, TILEC_SCOPE_SHARED);
    cr_assert_eq(buf(k, "C_local")->scope, TILEC_SCOPE_FRAGMENT);
    cr_assert_eq(buf(k, "C_local")->dtype, TILEC_FLOAT32);
    cr_assert_eq(k->out_mask, 1u << 2);
    cr_assert_eq(k->ngrid, 2);
    cr_assert_eq(cint(k->grid[0]), 4);   /* ceil(100 / 32) */
    cr_assert_eq(cint(k->grid[1]), 4);
    cr_assert_eq(k->threads[0], 128);
    cr_assert_eq(k->threads[1], 1);
    cr_assert_str_eq(k->block[0]->name, "bx");
    cr_assert_eq(k->block[0]->kind, TILEC_VAR_BLOCK);
    cr_assert_eq(count(k->body), 3);
    tilec_ir_stmt_t *s0 = nth(k->body, 0), *loop = nth(k->body, 1), *last = nth(k->body, 2);
    cr_assert_eq(s0->kind, TILEC_ST_FILL);
    cr_assert_eq(s0->u.fill.value->kind, TILEC_EX_FLOAT);
    cr_assert_eq(s0->u.fill.value->dtype, TILEC_FLOAT32);
    cr_assert_eq(loop->kind, TILEC_ST_FOR);
    cr_assert_eq(loop->u.loop.kind, TILEC_LOOP_PIPELINED);
    cr_assert_eq(loop->u.loop.num_stages, 3);
    cr_assert_eq(cint(loop->u.loop.extent), 4);
    cr_assert_eq(loop->u.loop.var->kind, TILEC_VAR_LOOP);
    /* corner form: A[by*64, k*16] takes A_shared's extents (64, 16) */
    tilec_ir_stmt_t *c0 = loop->u.loop.body;
    cr_assert_eq(c0->kind, TILEC_ST_COPY);
    cr_assert_eq(c0->u.copy.src.buf, k->bufs[0]);
    cr_assert_eq(c0->u.copy.src.extent[0], 64);
    cr_assert_eq(c0->u.copy.src.extent[1], 16);
    cr_assert_eq(c0->u.copy.dst.extent[0], 64);
    cr_assert_eq(c0->u.copy.dst.extent[1], 16);
    cr_assert_eq(c0->u.copy.src.base[0]->kind, TILEC_EX_BINARY);
    cr_assert_eq(cint(c0->u.copy.dst.base[0]), 0);
    tilec_ir_stmt_t *g = nth(c0, 2);
    cr_assert_eq(g->kind, TILEC_ST_GEMM);
    cr_assert_eq(g->u.gemm.c, buf(k, "C_local"));
    cr_assert_eq(g->u.gemm.trans_a, 0);
    cr_assert_eq(last->kind, TILEC_ST_COPY);
    cr_assert_eq(last->u.copy.dst.buf, k->bufs[2]);
    cr_assert_eq(last->u.copy.dst.extent[0], 64);
    cr_assert_eq(last->u.copy.dst.extent[1], 32);
    cr_assert_eq(x->r.nsyms, 0);
    char *txt = tilec_ir_print(x->r.module);
    cr_assert(txt);
    free(txt);
    done(x);
}

Test(frontend, defaults_and_overrides)
{
    tilec_define_t defs[] = {{"M", "64"}, {"N", "64"}, {"K", "32"}, {"block_M", "32"}, {"dtype", "\"float32\""}};
    res_t *x = compile_ok(GEMM, 5, defs);
    tilec_ir_kernel_t *k = K(x);
    cr_assert_eq(cint(buf(k, "A_shared")->shape[0]), 32);
    cr_assert_eq(k->bufs[0]->dtype, TILEC_FLOAT32);
    cr_assert_eq(cint(k->grid[1]), 2);
    done(x);
}

Test(frontend, copy_corner_alignment_and_slices)
{
    const char *src = HDR
        "def f(B=2, S=128, H=4, D=64, bm=32):\n"
        "    @T.prim_func\n"
        "    def main(Q: T.Tensor((B, S, H, D), \"float16\"), O: T.Tensor((S, D), \"float32\")):\n"
        "        with T.Kernel(T.ceildiv(S, bm), H, B, threads=(32, 4)) as (bx, by, bz):\n"
        "            s = T.alloc_shared((bm, D), \"float16\")\n"
        "            r = T.alloc_fragment((D,), \"float32\")\n"
        "            T.copy(Q[bz, bx * bm:(bx + 1) * bm, by, :], s)\n"
        "            T.copy(s[0, :], r)\n"
        "            T.copy(r, O[bx, 0])\n"
        "            T.copy(Q[bz, bx * bm, by, 0], s[0:1, 0:D])\n"
        "    return main\n";
    res_t *x = compile_ok(src, 0, NULL);
    tilec_ir_kernel_t *k = K(x);
    cr_assert_eq(k->ngrid, 3);
    cr_assert_eq(k->threads[0], 32);
    cr_assert_eq(k->threads[1], 4);
    tilec_ir_stmt_t *c = k->body;
    int64_t e0[] = {1, 32, 1, 64};
    for (int i = 0; i < 4; i++) cr_assert_eq(c->u.copy.src.extent[i], e0[i]);
    c = c->next;
    cr_assert_eq(c->u.copy.src.extent[0], 1);
    cr_assert_eq(c->u.copy.src.extent[1], 64);
    cr_assert_eq(c->u.copy.dst.extent[0], 64);
    c = c->next; /* corner O[bx, 0] gets (1, 64) from the 1-D r */
    cr_assert_eq(c->u.copy.dst.extent[0], 1);
    cr_assert_eq(c->u.copy.dst.extent[1], 64);
    c = c->next; /* corner of a 4-D tensor from a (1, 64) region: trailing alignment */
    int64_t e3[] = {1, 1, 1, 64};
    for (int i = 0; i < 4; i++) cr_assert_eq(c->u.copy.src.extent[i], e3[i]);
    done(x);
}

Test(frontend, tuple_unpacking_shape_and_dtype)
{
    const char *src = HDR
        "def f(M=8, N=16):\n"
        "    a, (b, c) = 1, (2, 3)\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((M, N), \"float32\")):\n"
        "        rows, cols = A.shape\n"
        "        with T.Kernel(1) as bx:\n"
        "            t = T.alloc_fragment((rows, cols + a + b + c - 6), A.dtype)\n"
        "            T.copy(A, t)\n"
        "            assert len(A.shape) == 2 and t.dtype == \"float32\" and t.dtype == T.float32\n"
        "    return main\n";
    res_t *x = compile_ok(src, 0, NULL);
    tilec_ir_buffer_t *t = buf(K(x), "t");
    cr_assert_eq(cint(t->shape[0]), 8);
    cr_assert_eq(cint(t->shape[1]), 16);
    cr_assert_eq(t->dtype, TILEC_FLOAT32);
    cr_assert_eq(K(x)->ngrid, 1);
    cr_assert_str_eq(K(x)->block[0]->name, "bx");
    done(x);
}

Test(frontend, macro_inlining_and_return_value)
{
    const char *src = HDR
        "def f(N=32):\n"
        "    @T.macro\n"
        "    def scale(buf, s):\n"
        "        for i in T.Parallel(N):\n"
        "            buf[i] = buf[i] * s\n"
        "    @T.macro\n"
        "    def twice(x):\n"
        "        return x * 2\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((N,), \"float32\")):\n"
        "        with T.Kernel(1) as bx:\n"
        "            f = T.alloc_fragment((N,), \"float32\")\n"
        "            T.copy(A, f)\n"
        "            scale(f, twice(3))\n"
        "            scale(f, s=0.5)\n"
        "            T.copy(f, A)\n"
        "    return main\n";
    res_t *x = compile_ok(src, 0, NULL);
    tilec_ir_kernel_t *k = K(x);
    cr_assert_eq(count(k->body), 4);
    tilec_ir_stmt_t *l1 = nth(k->body, 1), *l2 = nth(k->body, 2);
    cr_assert_eq(l1->kind, TILEC_ST_FOR);
    cr_assert_eq(l1->u.loop.kind, TILEC_LOOP_PARALLEL);
    cr_assert_eq(l2->kind, TILEC_ST_FOR);
    cr_assert_neq(l1->u.loop.var, l2->u.loop.var);
    cr_assert_str_neq(l1->u.loop.var->name, l2->u.loop.var->name);
    tilec_ir_expr_t *v = l1->u.loop.body->u.store.value;
    cr_assert_eq(v->kind, TILEC_EX_BINARY);
    cr_assert_eq(v->u.bin.b->kind, TILEC_EX_FLOAT);
    cr_assert_float_eq(v->u.bin.b->u.f, 6.0, 1e-12);
    done(x);
}

Test(frontend, compile_time_if_and_loops)
{
    const char *src = HDR
        "def f(N=16, mode=\"max\", flags=(1, 0, 1)):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((N,), \"float32\"), R: T.Tensor((1,), \"float32\")):\n"
        "        with T.Kernel(1) as bx:\n"
        "            a = T.alloc_fragment((N,), \"float32\")\n"
        "            r = T.alloc_fragment((1,), \"float32\")\n"
        "            T.copy(A, a)\n"
        "            if mode == \"max\":\n"
        "                T.reduce_max(a, r, dim=0)\n"
        "            elif mode == \"sum\":\n"
        "                T.reduce_sum(a, r, dim=0)\n"
        "            else:\n"
        "                T.reduce_min(a, r, dim=0)\n"
        "            for fl in flags:\n"
        "                if fl:\n"
        "                    T.fill(r, fl)\n"
        "            T.copy(r, R)\n"
        "    return main\n";
    tilec_define_t defs[] = {{"mode", "sum"}};
    res_t *x = compile_ok(src, 1, defs);
    tilec_ir_kernel_t *k = K(x);
    cr_assert_eq(count(k->body), 5);
    cr_assert_eq(nth(k->body, 1)->kind, TILEC_ST_REDUCE);
    cr_assert_eq(nth(k->body, 1)->u.reduce.op, TILEC_RED_SUM);
    cr_assert_eq(nth(k->body, 1)->u.reduce.dim, 0);
    cr_assert_eq(nth(k->body, 1)->u.reduce.clear, 1);
    cr_assert_eq(nth(k->body, 2)->kind, TILEC_ST_FILL);
    cr_assert_eq(nth(k->body, 3)->kind, TILEC_ST_FILL);
    cr_assert_eq(count_kind(k->body, TILEC_ST_IF), 0);
    done(x);
}

Test(frontend, runtime_if_and_select)
{
    const char *src = HDR
        "@T.prim_func\n"
        "def main(A: T.Tensor((64,), \"float32\"), B: T.Tensor((64,), \"int32\")):\n"
        "    with T.Kernel(2, threads=32) as bx:\n"
        "        for i in T.Parallel(32):\n"
        "            if bx * 32 + i < 40:\n"
        "                A[bx * 32 + i] = T.if_then_else(i > 3, 0, -T.infinity(\"float32\"))\n"
        "            elif i == 0:\n"
        "                B[i] = 7\n"
        "            else:\n"
        "                A[i] = A[i] if i % 2 == 0 else 1.0\n";
    res_t *x = compile_ok(src, 0, NULL);
    tilec_ir_kernel_t *k = K(x);
    cr_assert_str_eq(k->name, "main");
    tilec_ir_stmt_t *ifs = k->body->u.loop.body;
    cr_assert_eq(ifs->kind, TILEC_ST_IF);
    cr_assert_eq(ifs->u.cond.cond->dtype, TILEC_BOOL);
    tilec_ir_expr_t *sel = ifs->u.cond.then->u.store.value;
    cr_assert_eq(sel->kind, TILEC_EX_SELECT);
    cr_assert_eq(sel->dtype, TILEC_FLOAT32);
    cr_assert_eq(sel->u.sel.a->kind, TILEC_EX_FLOAT);
    cr_assert_eq(sel->u.sel.a->dtype, TILEC_FLOAT32);
    cr_assert_eq(ifs->u.cond.els->kind, TILEC_ST_IF);
    cr_assert_eq(ifs->u.cond.els->u.cond.els->u.store.value->kind, TILEC_EX_SELECT);
    done(x);
}

Test(frontend, typing_of_mixed_expressions)
{
    const char *src = HDR
        "@T.prim_func\n"
        "def main(A: T.Tensor((8,), \"int32\"), H: T.Tensor((8,), \"float16\"), F: T.Tensor((8,), \"float32\"),\n"
        "         Q: T.Tensor((8,), \"int8\"), D: T.Tensor((8,), \"float64\")):\n"
        "    with T.Kernel(1) as bx:\n"
        "        for i in T.serial(8):\n"
        "            F[i] = A[i] * 0.5\n"
        "            F[i] = H[i] * F[i]\n"
        "            A[i] = A[i] / 3\n"
        "            A[i] = A[i] // 3 + A[i] % 3\n"
        "            H[i] = H[i] * 2\n"
        "            F[i] = T.exp(A[i])\n"
        "            A[i] = Q[i] + A[i]\n"
        "            D[i] = F[i] + D[i]\n"
        "            A[i] = i ** 2\n"
        "            F[i] = F[i] ** 0.5\n";
    res_t *x = compile_ok(src, 0, NULL);
    tilec_ir_stmt_t *s = K(x)->body->u.loop.body;
    cr_assert_eq(K(x)->body->u.loop.kind, TILEC_LOOP_SERIAL);
    /* A[i] * 0.5: int32 * float literal -> float32 multiply */
    tilec_ir_expr_t *v = s->u.store.value;
    cr_assert_eq(v->kind, TILEC_EX_BINARY);
    cr_assert_eq(v->dtype, TILEC_FLOAT32);
    cr_assert_eq(v->u.bin.a->kind, TILEC_EX_CAST);
    /* float16 * float32 -> float32 */
    s = s->next;
    v = s->u.store.value;
    cr_assert_eq(v->dtype, TILEC_FLOAT32);
    cr_assert_eq(v->u.bin.a->kind, TILEC_EX_CAST);
    cr_assert_eq(v->u.bin.a->dtype, TILEC_FLOAT32);
    /* int / int: truncating DIV on int32 */
    s = s->next;
    v = s->u.store.value;
    cr_assert_eq(v->u.bin.op, TILEC_BIN_DIV);
    cr_assert_eq(v->dtype, TILEC_INT32);
    s = s->next;
    v = s->u.store.value;
    cr_assert_eq(v->u.bin.op, TILEC_BIN_ADD);
    cr_assert_eq(v->u.bin.a->u.bin.op, TILEC_BIN_FLOORDIV);
    cr_assert_eq(v->u.bin.b->u.bin.op, TILEC_BIN_FLOORMOD);
    /* float16 * 2: the literal adopts float16 */
    s = s->next;
    v = s->u.store.value;
    cr_assert_eq(v->dtype, TILEC_FLOAT16);
    cr_assert_eq(v->u.bin.b->kind, TILEC_EX_FLOAT);
    cr_assert_eq(v->u.bin.b->dtype, TILEC_FLOAT16);
    /* T.exp on an int: cast to float32 first */
    s = s->next;
    v = s->u.store.value;
    cr_assert_eq(v->kind, TILEC_EX_UNARY);
    cr_assert_eq(v->u.un.op, TILEC_UN_EXP);
    cr_assert_eq(v->dtype, TILEC_FLOAT32);
    cr_assert_eq(v->u.un.a->kind, TILEC_EX_CAST);
    /* int8 + int32 -> int32 */
    s = s->next;
    v = s->u.store.value;
    cr_assert_eq(v->dtype, TILEC_INT32);
    cr_assert_eq(v->u.bin.a->kind, TILEC_EX_CAST);
    /* float32 + float64 -> float64 */
    s = s->next;
    v = s->u.store.value;
    cr_assert_eq(v->dtype, TILEC_FLOAT64);
    /* i ** 2 on ints is a multiply, F ** 0.5 a POW */
    s = s->next;
    cr_assert_eq(s->u.store.value->u.bin.op, TILEC_BIN_MUL);
    s = s->next;
    cr_assert_eq(s->u.store.value->u.bin.op, TILEC_BIN_POW);
    cr_assert_eq(s->u.store.value->dtype, TILEC_FLOAT32);
    done(x);
}

Test(frontend, scalars_let_and_alloc_var)
{
    const char *src = HDR
        "@T.prim_func\n"
        "def main(A: T.Tensor((16,), \"float32\"), S: T.Tensor((1,), \"float32\")):\n"
        "    with T.Kernel(1) as bx:\n"
        "        acc = T.alloc_var(\"float32\", init=0)\n"
        "        c = T.alloc_var(T.int32)\n"
        "        c = 0\n"
        "        for i in range(2, 16, 3):\n"
        "            x = A[i] * 2\n"
        "            x = x + 1\n"
        "            x += 1\n"
        "            acc += x\n"
        "            c = c + 1\n"
        "        S[0] = acc\n";
    res_t *x = compile_ok(src, 0, NULL);
    tilec_ir_kernel_t *k = K(x);
    tilec_ir_buffer_t *acc = buf(k, "acc");
    cr_assert_eq(acc->scope, TILEC_SCOPE_VAR);
    cr_assert_eq(acc->ndim, 1);
    cr_assert_eq(cint(acc->shape[0]), 1);
    tilec_ir_stmt_t *s = k->body;
    cr_assert_eq(s->kind, TILEC_ST_STORE);   /* init */
    cr_assert_eq(s->u.store.buf, acc);
    s = s->next;
    cr_assert_eq(s->kind, TILEC_ST_STORE);   /* c = 0 */
    cr_assert_eq(s->u.store.buf, buf(k, "c"));
    cr_assert_eq(s->u.store.value->dtype, TILEC_INT32);
    s = s->next;
    cr_assert_eq(s->kind, TILEC_ST_FOR);
    cr_assert_eq(cint(s->u.loop.extent), 5);   /* 2, 5, 8, 11, 14 */
    tilec_ir_stmt_t *b = s->u.loop.body;
    /* A[2 + k*3]: index rewritten from the 0-based loop var */
    cr_assert_eq(b->kind, TILEC_ST_ASSIGN);
    tilec_ir_var_t *xv = b->u.assign.var;
    cr_assert_eq(xv->kind, TILEC_VAR_LET);
    cr_assert_eq(xv->dtype, TILEC_FLOAT32);
    cr_assert_eq(b->u.assign.value->u.bin.a->u.load.idx[0]->kind, TILEC_EX_BINARY);
    cr_assert_eq(b->next->kind, TILEC_ST_ASSIGN);
    cr_assert_eq(b->next->u.assign.var, xv);
    cr_assert_eq(b->next->next->u.assign.var, xv);
    tilec_ir_stmt_t *st = nth(b, 3);
    cr_assert_eq(st->kind, TILEC_ST_STORE);
    cr_assert_eq(st->u.store.buf, acc);
    cr_assert_eq(nth(b, 4)->kind, TILEC_ST_STORE);
    cr_assert_eq(nth(s, 1)->u.store.value->kind, TILEC_EX_LOAD);
    done(x);
}

Test(frontend, dynamic_symbols)
{
    const char *src = HDR
        "def f(N=64):\n"
        "    M = T.dynamic(\"m\")\n"
        "    L = T.symbolic(\"len\")\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((M, N), \"float32\"), B: T.Tensor((L,), \"float32\")):\n"
        "        with T.Kernel(T.ceildiv(M, 32), threads=64) as bx:\n"
        "            t = T.alloc_shared((32, N), \"float32\")\n"
        "            T.copy(A[bx * 32, 0], t)\n"
        "            T.copy(t, A[bx * 32, 0])\n"
        "    return main\n";
    tilec_define_t defs[] = {{"m", "77"}, {"L", "5"}};
    res_t *x = compile_ok(src, 2, defs);
    tilec_ir_kernel_t *k = K(x);
    cr_assert_eq(x->r.nsyms, 2);
    int nsym = 0;
    for (int i = 0; i < k->nvars; i++) {
        if (k->vars[i]->kind != TILEC_VAR_SYM) continue;
        if (!strcmp(k->vars[i]->name, "m")) cr_assert_eq(x->r.sym_values[nsym], 77);
        else if (!strcmp(k->vars[i]->name, "len")) cr_assert_eq(x->r.sym_values[nsym], 5);
        else cr_assert_fail("unexpected symbol %s", k->vars[i]->name);
        nsym++;
    }
    cr_assert_eq(nsym, 2);
    cr_assert_eq(k->bufs[0]->shape[0]->kind, TILEC_EX_VAR);
    cr_assert_eq(k->bufs[0]->shape[0]->u.var->kind, TILEC_VAR_SYM);
    cr_assert_eq(k->grid[0]->kind, TILEC_EX_BINARY);
    done(x);

    /* without -D the value is -1 */
    x = compile_ok(src, 0, NULL);
    cr_assert_eq(x->r.nsyms, 2);
    cr_assert_eq(x->r.sym_values[0], -1);
    done(x);
}

Test(frontend, module_constants_and_entry)
{
    const char *src = HDR
        "N = 32\n"
        "DT = \"float16\"\n"
        "@T.prim_func\n"
        "def first(A: T.Tensor((N,), DT)):\n"
        "    with T.Kernel(1) as bx:\n"
        "        T.fill(A[0:N], 1)\n"
        "@tilelang.jit(out_idx=-2)\n"
        "def second(n=8):\n"
        "    @T.prim_func\n"
        "    def k(A: T.Tensor((n,), DT), B: T.Tensor((n,), DT), C: T.Tensor((n,), DT)):\n"
        "        with T.Kernel(1) as bx:\n"
        "            T.fill(A, 2)\n"
        "    return k\n";
    res_t *x = compile_ok(src, 0, NULL);
    cr_assert_str_eq(K(x)->name, "second");
    cr_assert_eq(K(x)->out_mask, 1u << 1);
    done(x);
    tilec_define_t defs[] = {{"N", "12"}, {"DT", "float32"}};
    x = compile_e(src, "first", 2, defs);
    cr_assert_eq(x->rc, 0, "%s", tilec_diag_text(&x->d));
    cr_assert_str_eq(K(x)->name, "first");
    cr_assert_eq(cint(K(x)->bufs[0]->shape[0]), 12);
    cr_assert_eq(K(x)->bufs[0]->dtype, TILEC_FLOAT32);
    cr_assert_eq(K(x)->body->u.fill.dst.extent[0], 12);
    done(x);
}

Test(frontend, atomics_reduce_cumsum_hints)
{
    const char *src = HDR
        "@T.prim_func\n"
        "def main(A: T.Tensor((32, 16), \"float32\"), S: T.Tensor((16,), \"float32\")):\n"
        "    with T.Kernel(2, threads=128) as bx:\n"
        "        T.use_swizzle(panel_size=10)\n"
        "        T.annotate_layout({A: None})\n"
        "        a = T.alloc_fragment((16, 16), \"float32\")\n"
        "        r = T.alloc_fragment((16,), \"float32\")\n"
        "        T.copy(A[bx * 16, 0], a)\n"
        "        T.reduce_sum(a, r, dim=0, clear=False)\n"
        "        T.cumsum(a, dim=-1, reverse=True)\n"
        "        T.atomic_add(S, r)\n"
        "        T.atomic_max(S[3], 1.0)\n"
        "        T.sync_threads()\n"
        "        T.print(r, msg=\"r\")\n";
    res_t *x = compile_ok(src, 0, NULL);
    tilec_ir_stmt_t *s = K(x)->body;
    cr_assert_eq(s->kind, TILEC_ST_HINT);
    cr_assert_str_eq(s->u.hint.name, "use_swizzle");
    cr_assert_eq(s->u.hint.nargs, 1);
    cr_assert_eq(cint(s->u.hint.args[0]), 10);
    s = s->next;
    cr_assert_eq(s->kind, TILEC_ST_HINT);
    cr_assert_str_eq(s->u.hint.name, "annotate_layout");
    s = s->next->next;
    cr_assert_eq(s->kind, TILEC_ST_REDUCE);
    cr_assert_eq(s->u.reduce.dim, 0);
    cr_assert_eq(s->u.reduce.clear, 0);
    s = s->next;
    cr_assert_eq(s->kind, TILEC_ST_CUMSUM);
    cr_assert_eq(s->u.cumsum.src, s->u.cumsum.dst);
    cr_assert_eq(s->u.cumsum.dim, 1);
    cr_assert_eq(s->u.cumsum.reverse, 1);
    s = s->next;
    cr_assert_eq(s->kind, TILEC_ST_FOR);
    cr_assert_eq(s->u.loop.kind, TILEC_LOOP_PARALLEL);
    cr_assert_eq(cint(s->u.loop.extent), 16);
    cr_assert_eq(s->u.loop.body->kind, TILEC_ST_ATOMIC);
    cr_assert_eq(s->u.loop.body->u.atomic.op, TILEC_ATOMIC_ADD);
    cr_assert_eq(s->u.loop.body->u.atomic.value->kind, TILEC_EX_LOAD);
    s = s->next;
    cr_assert_eq(s->kind, TILEC_ST_ATOMIC);
    cr_assert_eq(s->u.atomic.op, TILEC_ATOMIC_MAX);
    cr_assert_eq(cint(s->u.atomic.idx[0]), 3);
    s = s->next;
    cr_assert_eq(s->kind, TILEC_ST_SYNC);
    s = s->next;
    cr_assert_eq(s->kind, TILEC_ST_PRINT);
    cr_assert_str_eq(s->u.print.msg, "r");
    cr_assert_not_null(s->u.print.buf);
    done(x);
}

/* The tile form of an atomic into a tensor is boundary-safe like T.copy:
 * a region that may run past the edge gets a guard, one that provably
 * stays inside does not (see atomics_reduce_cumsum_hints). */
Test(frontend, tile_atomic_is_boundary_safe)
{
    const char *src = HDR
        "@T.prim_func\n"
        "def main(A: T.Tensor((32, 90), \"float32\"), S: T.Tensor((90,), \"float32\")):\n"
        "    with T.Kernel(3, threads=128) as bx:\n"
        "        a = T.alloc_fragment((32, 32), \"float32\")\n"
        "        r = T.alloc_fragment((32,), \"float32\")\n"
        "        T.copy(A[0, bx * 32], a)\n"
        "        T.reduce_sum(a, r, dim=0)\n"
        "        T.atomic_add(S[bx * 32], r)\n";
    res_t *x = compile_ok(src, 0, NULL);
    tilec_ir_stmt_t *s = nth(K(x)->body, 2);
    cr_assert_eq(s->kind, TILEC_ST_FOR);
    cr_assert_eq(s->u.loop.kind, TILEC_LOOP_PARALLEL);
    tilec_ir_stmt_t *g = s->u.loop.body;
    cr_assert_eq(g->kind, TILEC_ST_IF, "a ragged tile atomic must be guarded");
    cr_assert_null(g->u.cond.els);
    cr_assert_eq(g->u.cond.then->kind, TILEC_ST_ATOMIC);
    cr_assert_eq(g->u.cond.cond->kind, TILEC_EX_BINARY);
    cr_assert_eq(g->u.cond.cond->u.bin.op, TILEC_BIN_AND);
    done(x);
}

Test(frontend, gemm_options_and_loops)
{
    const char *src = HDR
        "@T.prim_func\n"
        "def main(A: T.Tensor((32, 16), \"float16\"), B: T.Tensor((64, 16), \"float16\")):\n"
        "    with T.Kernel(1, threads=128) as bx:\n"
        "        a = T.alloc_shared((32, 16), \"float16\")\n"
        "        b = T.alloc_shared((64, 16), \"float16\")\n"
        "        c = T.alloc_fragment((32, 64), \"float32\")\n"
        "        T.gemm(a, b, c, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True, k_pack=1)\n"
        "        for i in T.unroll(4):\n"
        "            for j in T.vectorized(8):\n"
        "                c[i, j] = 0\n"
        "        for i, j in T.Parallel(32, 64):\n"
        "            c[i, j] = T.max(c[i, j], T.abs(c[i, j]))\n";
    res_t *x = compile_ok(src, 0, NULL);
    tilec_ir_stmt_t *g = K(x)->body;
    cr_assert_eq(g->kind, TILEC_ST_GEMM);
    cr_assert_eq(g->u.gemm.trans_b, 1);
    cr_assert_eq(g->u.gemm.clear_accum, 1);
    cr_assert_eq(g->u.gemm.policy, TILEC_POLICY_FULLCOL);
    cr_assert_eq(g->next->u.loop.kind, TILEC_LOOP_UNROLL);
    cr_assert_eq(g->next->u.loop.body->u.loop.kind, TILEC_LOOP_VECTORIZED);
    tilec_ir_stmt_t *p = g->next->next;
    cr_assert_eq(p->u.loop.kind, TILEC_LOOP_PARALLEL);
    cr_assert_eq(cint(p->u.loop.extent), 32);
    cr_assert_eq(p->u.loop.body->kind, TILEC_ST_FOR);
    cr_assert_eq(cint(p->u.loop.body->u.loop.extent), 64);
    done(x);
}

Test(frontend, compile_time_python_semantics)
{
    const char *src = HDR
        "def helper(x, y=3):\n"
        "    return x * y\n"
        "def f(n=10):\n"
        "    assert 7 // -2 == -4 and 7 % -2 == -1 and -7 // 2 == -4\n"
        "    assert 7 / 2 == 3.5 and 2 ** 10 == 1024 and 2 ** -1 == 0.5\n"
        "    assert (1, 2, 3)[1:] == (2, 3) and (1, 2, 3)[-1] == 3 and len(range(0, 10, 3)) == 4\n"
        "    assert min(3, 1, 2) == 1 and max((4, 9)) == 9 and abs(-3) == 3 and int(3.9) == 3\n"
        "    assert float(2) == 2.0 and (not 0) and (1 if n > 5 else 2) == 1 and helper(2) == 6\n"
        "    assert helper(y=4, x=2) == 8 and 1 < 2 < 3 and not (1 < 3 < 2) and 3 in (1, 2, 3)\n"
        "    assert \"float\" + \"16\" == \"float16\" and T.float16 == \"float16\" and None is None\n"
        "    total = 0\n"
        "    for i in range(n):\n"
        "        if i == 3:\n"
        "            continue\n"
        "        if i == 6:\n"
        "            break\n"
        "        total += i\n"
        "    assert total == 12, \"loop\"\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((total,), \"float32\")):\n"
        "        with T.Kernel(1) as bx:\n"
        "            T.clear(A)\n"
        "    return main\n";
    res_t *x = compile_ok(src, 0, NULL);
    cr_assert_eq(cint(K(x)->bufs[0]->shape[0]), 12);
    done(x);
}

/* ---- errors --------------------------------------------------------------- */

#define KERNEL_HEAD HDR "@T.prim_func\ndef main(A: T.Tensor((64, 64), \"float16\"), B: T.Tensor((64,), \"float32\")):\n" \
    "    with T.Kernel(1, threads=128) as bx:\n"

Test(frontend_errors, gemm_accumulator_in_shared)
{
    expect_err(KERNEL_HEAD
               "        a = T.alloc_shared((64, 64), \"float16\")\n"
               "        c = T.alloc_shared((64, 64), \"float32\")\n"
               "        T.gemm(a, a, c)\n", 9, "must be a T.alloc_fragment");
}

Test(frontend_errors, gemm_dtype_mismatch)
{
    expect_err(KERNEL_HEAD
               "        a = T.alloc_shared((64, 64), \"float16\")\n"
               "        b = T.alloc_shared((64, 64), \"float32\")\n"
               "        c = T.alloc_fragment((64, 64), \"float32\")\n"
               "        T.gemm(a, b, c)\n", 10, "must have the same dtype");
}

Test(frontend_errors, gemm_shape_mismatch)
{
    expect_err(KERNEL_HEAD
               "        a = T.alloc_shared((64, 32), \"float16\")\n"
               "        b = T.alloc_shared((16, 64), \"float16\")\n"
               "        c = T.alloc_fragment((64, 64), \"float32\")\n"
               "        T.gemm(a, b, c)\n", 10, "reduction dimension of A ('a') is 32 but that of B ('b') is 16");
}

Test(frontend_errors, gemm_global_operand)
{
    expect_err(KERNEL_HEAD
               "        c = T.alloc_fragment((64, 64), \"float32\")\n"
               "        T.gemm(A, A, c)\n", 8, "copy its tile into T.alloc_shared");
}

Test(frontend_errors, copy_shape_mismatch)
{
    expect_err(KERNEL_HEAD
               "        s = T.alloc_shared((32, 16), \"float16\")\n"
               "        T.copy(A[0:16, 0:32], s)\n", 8, "has shape (16, 32) but the destination region of 's' has shape (32, 16)");
}

Test(frontend_errors, copy_both_corners)
{
    expect_err(KERNEL_HEAD
               "        s = T.alloc_shared((32, 16), \"float16\")\n"
               "        T.copy(A[0, 0], s[0, 0])\n", 8, "both operands of T.copy are single elements");
}

Test(frontend_errors, index_count)
{
    expect_err(KERNEL_HEAD "        A[0] = 1\n", 7, "buffer 'A' has 2 dimensions but 1 index is given");
}

Test(frontend_errors, constant_index_out_of_range)
{
    expect_err(KERNEL_HEAD
               "        s = T.alloc_fragment((4,), \"float32\")\n"
               "        s[4] = 1\n", 8, "index 4 is out of range for dimension 0 of 's' (size 4)");
}

Test(frontend_errors, missing_parameter)
{
    expect_err(GEMM, 5, "parameter 'M' of 'matmul' has no default value: pass -D M=VALUE");
}

Test(frontend_errors, unknown_define)
{
    tilec_define_t defs[] = {{"M", "1"}, {"N", "1"}, {"K", "1"}, {"blockM", "3"}};
    expect_err_e(GEMM, NULL, 4, defs, 0, "-D blockM: 'blockM' is not a parameter, module constant or T.dynamic "
                 "symbol of this program (you can set: M, N, K, block_M");
}

/* A tuple or list -D value (a list-valued factory parameter): each item is
 * read like a -D value of its own. */
Test(frontend, define_tuple_value)
{
    tilec_define_t defs[] = {{"sizes", "(3, 5,)"}, {"names", "[a, 'b']"}};
    res_t *x = compile_ok(HDR "def f(sizes, names):\n    assert sizes == (3, 5) and names == [\"a\", \"b\"]\n"
                          "    @T.prim_func\n    def main(A: T.Tensor((sum(sizes),), \"float32\")):\n"
                          "        with T.Kernel(1) as bx:\n            T.clear(A)\n    return main\n", 2, defs);
    cr_assert_eq(K(x)->bufs[0]->shape[0]->u.i, 8);
    done(x);
}

/* T.sync_grid() only at a kernel body's top level; values before it end there. */
Test(frontend_errors, sync_grid_misuse)
{
    expect_err(KERNEL_HEAD "        for i in T.serial(2):\n            T.sync_grid()\n", 8, "at the top level of a kernel body only");
    expect_err(KERNEL_HEAD "        x = bx * 2\n        T.sync_grid()\n        B[x] = 0\n", 9,
               "'x' is a run-time value of the kernel before T.sync_grid()");
}

/* Misused classes are diagnostics. */
Test(frontend_errors, class_misuse)
{
    expect_err("class A:\n    x = 1\na = A()\ny = a.z\n", 4, "'A' object has no attribute 'z'");
    expect_err("class A:\n    x = 1\ny = A.z\n", 3, "class 'A' has no attribute 'z'");
    expect_err("class A:\n    x = 1\na = A(3)\n", 3, "class 'A' has no __init__ and takes no arguments");
    expect_err("class A:\n    def __init__(self, v):\n        self.v = v\na = A()\n", 4,
               "missing argument 'v' in the call of '__init__'");
}

/* T.tfloat32 (and "tfloat32") is float32 storage. */
Test(frontend, tfloat32_is_float32)
{
    res_t *x = compile_ok(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), T.tfloat32), B: T.Tensor((4,), \"tfloat32\")):\n"
                          "    with T.Kernel(1) as bx:\n        T.copy(A, B)\n", 0, NULL);
    cr_assert_eq(K(x)->bufs[0]->dtype, TILEC_FLOAT32);
    cr_assert_eq(K(x)->bufs[1]->dtype, TILEC_FLOAT32);
    done(x);
}

/* A -D value that is not what it looks like says what is wrong with it
 * (an int past int64 used to become a float: "must be an integer, got float"). */
Test(frontend_errors, define_values)
{
    static const struct { const char *v, *msg; } cases[] = {
        {"99999999999999999999", "-D M=99999999999999999999: out of range for int64"},
        {"-99999999999999999999", "out of range for int64"},
        {"0x1ffffffffffffffff", "out of range for int64"},
        {"1e999", "-D M=1e999: out of range for float64"},
        {"12abc", "-D M=12abc: not a number"},
        {"1.2.3", "not a number"},
        {"0xZZ", "-D M=0xZZ: not a hexadecimal integer"},
        {"(1,,2)", "-D M=(1,,2): an empty item in a tuple or list value"},
        {"[(1)]", "a tuple or list value takes one level of brackets"},
        {"(1, 12abc)", "-D M=(1, 12abc): not a number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tilec_define_t defs[] = {{"M", cases[i].v}, {"N", "1"}, {"K", "1"}};
        expect_err_e(GEMM, NULL, 3, defs, 0, cases[i].msg);
    }
    {
        tilec_define_t defs[] = {{"M", "1"}, {"N", "1"}, {"K", "1"}, {"block_M", "abc"}};
        expect_err_e(GEMM, NULL, 4, defs, 0, "-D block_M=abc: not a number (the program's value of 'block_M' is an integer)");
    }
    {
        tilec_define_t defs[] = {{"M", "0x10"}, {"N", "-0"}, {"K", "1e-400"}};
        res_t *x = compile_e("M = 1\nN = 2\nK = 3.0\n", NULL, 3, defs);
        cr_assert_eq(x->rc, -1); /* no kernel, but the values were read */
        cr_assert_null(strstr(tilec_diag_text(&x->d), "-D "), "%s", tilec_diag_text(&x->d));
        cr_assert(strstr(tilec_diag_text(&x->d), "no kernel") || strstr(tilec_diag_text(&x->d), "prim_func"),
                  "%s", tilec_diag_text(&x->d));
        done(x);
    }
}

Test(frontend_errors, unknown_entry)
{
    tilec_define_t defs[] = {{"M", "1"}, {"N", "1"}, {"K", "1"}};
    expect_err_e(GEMM, "gemm", 3, defs, 0, "no kernel factory or @T.prim_func named 'gemm' in t.py (available: matmul)");
}

/* Any import is accepted; using what tilec does not evaluate is the error,
 * and it names the construct. */
Test(frontend_errors, foreign_import)
{
    expect_err("import tilelang\nimport torch\nx = torch.randn(4)\n", 3, "'torch.randn(...)' is outside the subset");
    expect_err("from numpy import zeros\nz = zeros(3)\n", 2, "'numpy.zeros(...)' is outside the subset");
    expect_err("import numpy as np\n@np.vectorize\ndef f(x):\n    return x\n", 2,
               "decorator 'numpy.vectorize' is outside the subset");
    expect_err("from os.path import *\n", 1, "`from os.path import *` is outside the subset");
}

Test(frontend_errors, return_in_prim_func)
{
    expect_err(KERNEL_HEAD "        T.clear(B)\n    return A\n", 8, "a @T.prim_func cannot return a value");
}

/* Several `with T.Kernel` blocks: a chain of kernels with the same tensor
 * parameters, each verified; a block's names stay in it. */
Test(frontend, kernel_chain)
{
    res_t *x = compile_ok(KERNEL_HEAD "        T.clear(B)\n    with T.Kernel(2, threads=64) as by:\n        T.fill(B, 1)\n",
                          0, NULL);
    tilec_ir_kernel_t *k2;
    char err[512];
    cr_assert_eq(x->r.nmore, 1);
    k2 = x->r.more[0].module->kernel;
    cr_assert_eq(tilec_ir_verify(x->r.more[0].module, err, sizeof err), 0, "verifier: %s", err);
    cr_assert_eq(k2->nparams, K(x)->nparams);
    cr_assert_str_eq(k2->bufs[1]->name, "B");
    cr_assert_neq(k2->bufs[1], K(x)->bufs[1], "each kernel has its own parameter buffers");
    cr_assert_eq(k2->threads[0], 64);
    cr_assert_eq(k2->body->kind, TILEC_ST_FILL);
    done(x);
    expect_err(KERNEL_HEAD "        c = T.alloc_fragment((4,), \"float32\")\n    with T.Kernel(2) as by:\n"
               "        T.clear(c)\n", 9, "name 'c' is not defined");
    expect_err(KERNEL_HEAD "        with T.Kernel(2) as by:\n            T.clear(B)\n", 7,
               "cannot be inside another one");
}

/* `with A as t, B:` is two nested with statements; `as` on a later item is not supported. */
Test(frontend, with_several_items)
{
    res_t *x = compile_ok(HDR "from tilelang.tools.cuda import iket\n@T.prim_func\n"
                          "def main(A: T.Tensor((4,), \"float32\")):\n"
                          "    with T.Kernel(1) as bx, iket.range(\"a\"), iket.range(\"b\"):\n"
                          "        iket.mark(\"m\")\n        T.clear(A)\n", 0, NULL);
    cr_assert_eq(K(x)->body->kind, TILEC_ST_FILL);
    done(x);
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1), T.Kernel(2) as b:\n"
               "        pass\n", 6, "'as' after the first of several context managers");
}

Test(frontend_errors, no_kernel)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    pass\n", 4,
               "has no `with T.Kernel(...)` block");
}

Test(frontend_errors, assert_message)
{
    expect_err(HDR "n = 3\nassert n % 2 == 0, \"n must be even\"\n", 5, "assertion failed: n must be even");
}

Test(frontend_errors, macro_recursion)
{
    expect_err(HDR "@T.macro\ndef rec(x):\n    rec(x)\n"
               "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n"
               "    with T.Kernel(1) as bx:\n        rec(A)\n", 6, "calls nested too deeply");
}

/* while runs at compile time, bounded; on a run-time condition only as a
 * counted loop over a T.alloc_var with a constant positive step */
Test(frontend_errors, while_loop)
{
    static const char need[] = "a while loop on a run-time condition needs the form `while v < E:`";
    expect_err(KERNEL_HEAD "        while True:\n            pass\n", 8, "compile-time evaluation takes too long");
    expect_err(KERNEL_HEAD "        i = bx\n        while i < 2:\n            i += 1\n", 8, need);
#define VAR_HEAD KERNEL_HEAD "        i = T.alloc_var(T.int32)\n        i = bx\n"
    expect_err(VAR_HEAD "        while i > 0:\n            i -= 1\n", 9, need);               /* descending */
    expect_err(VAR_HEAD "        while i < 8:\n            i += bx\n", 9, need);              /* step not constant */
    expect_err(VAR_HEAD "        while i < 8:\n            i += 0\n", 9, need);               /* no progress */
    expect_err(VAR_HEAD "        while i < 8:\n            i += 1\n            i += 1\n", 9,
               "(2 statements of the body write 'i')");
    expect_err(VAR_HEAD "        while i < 8:\n            if bx == 0:\n                i += 1\n", 9,
               "(1 statement of the body writes 'i')");                               /* not at the top */
    expect_err(VAR_HEAD "        while i < B[0]:\n            i += 1\n", 9, need);           /* E reads a buffer */
    expect_err(VAR_HEAD "        while i < 8:\n            B[i] = 1.0\n", 9,
               "(0 statements of the body write 'i')");
#undef VAR_HEAD
}

Test(frontend_errors, raise_and_python_values)
{
    expect_err(HDR "n = 3\nif n % 2:\n    raise NotImplementedError(f'odd n={n}')\n", 6, "NotImplementedError: odd n=3");
    expect_err(HDR "x = [1, 2].push(3)\n", 4, "list has no attribute 'push'");
    expect_err(HDR "x = sorted([3, 1], key=len)\n", 4, "key must be a function or lambda defined in the program");
    expect_err(HDR "x = '{}'.format()\n", 4, "str.format: not enough arguments");
    expect_err(HDR "x = f'{1:q}'\n", 4, "unknown format type 'q'");
}

Test(frontend_errors, undefined_name)
{
    expect_err(KERNEL_HEAD "        T.clear(C)\n", 7, "name 'C' is not defined");
}

Test(frontend_errors, reduce_shape)
{
    expect_err(KERNEL_HEAD
               "        a = T.alloc_fragment((64, 32), \"float32\")\n"
               "        r = T.alloc_fragment((32,), \"float32\")\n"
               "        T.reduce_max(a, r, dim=1)\n", 9, "needs a destination of shape (64,), but 'r' has shape (32,)");
}

Test(frontend_errors, parallel_outside_kernel)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n"
               "    for i in T.Parallel(4):\n        A[i] = 0\n", 6, "T.Parallel must be inside the `with T.Kernel(...)`");
}

Test(frontend_errors, runtime_assert)
{
    expect_err(KERNEL_HEAD "        assert bx < 3\n", 7, "assert needs a compile-time condition");
}

Test(frontend_errors, symbolic_slice_extent)
{
    expect_err(HDR "M = T.dynamic(\"m\")\n@T.prim_func\ndef main(A: T.Tensor((M,), \"float32\")):\n"
               "    with T.Kernel(1) as bx:\n        s = T.alloc_shared((64,), \"float32\")\n"
               "        T.copy(A[0:M], s)\n", 9, "is not a compile-time constant");
}

Test(frontend_errors, break_in_kernel_loop)
{
    expect_err(KERNEL_HEAD "        for i in T.serial(4):\n            break\n", 8, "break is not supported in kernel loops");
}

Test(frontend_errors, compile_time_division_by_zero)
{
    expect_err(HDR "X = 1 // 0\n", 4, "integer division by zero");
}

Test(frontend_errors, kernel_unpack_count)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n"
               "    with T.Kernel(2, 2) as bx:\n        pass\n", 6, "T.Kernel has 2 grid dimensions");
}

Test(frontend_errors, tensor_annotation_required)
{
    expect_err(HDR "@T.prim_func\ndef main(A):\n    with T.Kernel(1) as bx:\n        pass\n", 5,
               "kernel parameter 'A' needs a type");
}

Test(frontend_errors, symbol_given_twice)
{
    tilec_define_t defs[] = {{"m", "3"}, {"M", "4"}};
    expect_err_e(HDR "M = T.dynamic(\"m\")\n@T.prim_func\ndef main(A: T.Tensor((M,), \"float32\")):\n"
                 "    with T.Kernel(1) as bx:\n        pass\n", NULL, 2, defs, 4, "given twice");
}

Test(frontend_errors, float_index)
{
    expect_err(KERNEL_HEAD "        B[0.5] = 1\n", 7, "an index must be an integer");
}

Test(frontend_errors, alloc_outside_kernel)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n"
               "    s = T.alloc_shared((4,), \"float32\")\n", 6, "must be inside the `with T.Kernel(...)`");
}

Test(frontend_errors, unknown_dtype)
{
    expect_err(KERNEL_HEAD "        s = T.alloc_shared((4,), \"float8\")\n", 7, "unknown dtype 'float8'");
}

Test(frontend_errors, unknown_T_member)
{
    expect_err(KERNEL_HEAD "        T.no_such_thing(B)\n", 7, "'T' has no member 'no_such_thing'");
}

/* Programs that are wrong in many small ways must give a diagnostic, never a crash. */
Test(frontend_errors, no_crash_on_odd_programs)
{
    static const char *const progs[] = {
        HDR "x = T\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        A[0] = A\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        A[0] = A[0:2]\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        T.copy(1, A)\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        T.gemm(A)\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(0):\n        pass\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1, threads=5000):\n        pass\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((-4,), \"float32\")):\n    with T.Kernel(1):\n        pass\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        x = T.alloc_shared((1 << 40,), \"float32\")\n",
        HDR "x = (1,) * 100000000000\n",
        HDR "x = 2 ** 64\n",
        HDR "def f():\n    for i in range(1 << 60):\n        pass\n    return 1\nX = f()\n",
        HDR "def f():\n    return f()\nX = f()\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        for i in T.Parallel(4, 4):\n            pass\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        A.shape = 3\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        A[0] = \"s\"\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        T.reduce_sum(A, A, dim=5)\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        A[0] = A[0] @ A[0]\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        A[0] = A[0] << 1\n",
        HDR "def f(x=T.Kernel):\n    return x(1)(2)\nY = f()\n",
        HDR "x = 0\nfor i in range(10 ** 12):\n    x += i\n",
        HDR "x = (1,)\ny = (1,)\nfor i in range(100000):\n    x = (x,)\n    y = (y,)\nz = x < y\n",
        HDR "M = T.dynamic(\"m\")\ny = M\nfor i in range(5000):\n    y = y + 1\n",
        HDR "@T.macro\ndef dbl(x):\n    return x + x\n@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n"
            "    with T.Kernel(1) as b:\n        v = A[0]\n        for i in range(60):\n            v = dbl(v)\n"
            "        A[1] = dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(v))))))))))))))))))))))\n",
        HDR "x = (1,) * 500000\nfor i in range(100000):\n    y = x + x\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        while True:\n            pass\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        x = T.alloc_var(\"float32\")\n        T.gemm(x, x, x)\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        T.atomic_add(A, 1.0)\n        T.atomic_add(A[0:2], A[0:3])\n",
        "",
    };
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        res_t *x = compile_e(progs[i], NULL, 0, NULL);
        cr_assert_eq(x->rc, -1, "program %zu compiled but should not", i);
        cr_assert(strstr(tilec_diag_text(&x->d), "error: "), "program %zu: no diagnostic", i);
        done(x);
    }
}

/* ---- semantics through the reference interpreter -------------------------- */

#include "interp.h"

static void interp_ok(res_t *x, void *const *args, const int64_t *syms)
{
    char err[512];
    int rc = tilec_interp_run(K(x), args, syms, err, sizeof err);
    cr_assert_eq(rc, 0, "interp: %s", err);
}

/* T.reinterpret rebuilds a value from integer bits (reinterpret.c): every
 * 16-bit pattern as float16 and bfloat16, every byte as int8, float8_e4m3fn
 * and float8_e5m2, gives back the same bits (NaNs: some NaN), in the
 * interpreter; subnormals, -0 and infinities included. */
Test(frontend_interp, reinterpret_every_bit_pattern)
{
    const char *src = HDR
        "from tvm import tirx\n"
        "@T.prim_func\n"
        "def main(U: T.Tensor((65536,), \"uint16\"), H: T.Tensor((65536,), \"float16\"),\n"
        "         Bf: T.Tensor((65536,), \"bfloat16\"), I8: T.Tensor((256,), \"int8\"),\n"
        "         F8: T.Tensor((256,), \"float8_e4m3fn\"), F5: T.Tensor((256,), \"float8_e5m2\"),\n"
        "         S: T.Tensor((2,), \"int32\")):\n"
        "    with T.Kernel(256, threads=128) as bx:\n"
        "        for i in T.Parallel(256):\n"
        "            u = U[bx * 256 + i]\n"
        "            H[bx * 256 + i] = tirx.reinterpret(T.float16, u)\n"
        "            Bf[bx * 256 + i] = T.reinterpret(u, \"bfloat16\")\n"
        "        if bx == 0:\n"
        "            for i in T.Parallel(256):\n"
        "                b = T.Cast(\"uint8\", U[i])\n"
        "                I8[i] = T.reinterpret(b, T.int8)\n"
        "                F8[i] = T.reinterpret(b, T.float8_e4m3fn)\n"
        "                F5[i] = T.reinterpret(b, T.float8_e5m2)\n"
        "            S[0] = T.reinterpret(T.Cast(\"int32\", -1), \"uint32\") // 65536\n"
        "            S[1] = T.reinterpret(T.Cast(\"uint16\", 65535), T.int16)\n";
    res_t *x = compile_ok(src, 0, NULL);
    static uint16_t U[65536], H[65536], Bf[65536];
    int8_t I8[256];
    uint8_t F8[256], F5[256];
    int32_t S[2] = {0};
    for (int i = 0; i < 65536; i++) U[i] = (uint16_t)i;
    void *args[] = {U, H, Bf, I8, F8, F5, S};
    interp_ok(x, args, NULL);
    for (int u = 0; u < 65536; u++) {
        int hnan = ((u >> 10) & 31) == 31 && (u & 1023), bnan = ((u >> 7) & 255) == 255 && (u & 127);
        if (hnan) cr_assert(((H[u] >> 10) & 31) == 31 && (H[u] & 1023), "f16 %04x -> %04x", u, H[u]);
        else cr_assert_eq(H[u], u, "f16 %04x -> %04x", u, H[u]);
        if (bnan) cr_assert(((Bf[u] >> 7) & 255) == 255 && (Bf[u] & 127), "bf16 %04x -> %04x", u, Bf[u]);
        else cr_assert_eq(Bf[u], u, "bf16 %04x -> %04x", u, Bf[u]);
    }
    for (int b = 0; b < 256; b++) {
        cr_assert_eq(I8[b], (int8_t)(b >= 128 ? b - 256 : b));
        if ((b & 127) == 127) cr_assert_eq(F8[b] & 127, 127, "e4m3 %02x -> %02x", b, F8[b]);
        else cr_assert_eq(F8[b], b, "e4m3 %02x -> %02x", b, F8[b]);
        if (((b >> 2) & 31) == 31 && (b & 3)) cr_assert(((F5[b] >> 2) & 31) == 31 && (F5[b] & 3));
        else cr_assert_eq(F5[b], b, "e5m2 %02x -> %02x", b, F5[b]);
    }
    cr_assert_eq(S[0], 65535);   /* 0xffffffff // 65536 */
    cr_assert_eq(S[1], -1);
    done(x);
}

/* thread-level and pointer constructs outside the subset name themselves */
Test(frontend_errors, named_outside_subset)
{
    expect_err(KERNEL_HEAD "        T.rng_init(0)\n", 7, "T.rng_init is outside the subset tilec supports");
    expect_err(KERNEL_HEAD "        B[0] = T.tvm_warp_shuffle(0, B[1], 0, 32, 32)\n", 7,
               "T.tvm_warp_shuffle is outside the subset tilec supports: warp shuffles");
    expect_err(KERNEL_HEAD "        p = T.ptr(\"float32\")\n", 7, "T.ptr is outside the subset tilec supports");
}

Test(frontend_errors, reinterpret)
{
    expect_err(KERNEL_HEAD "        B[0] = T.reinterpret(A[0, 0], \"int16\")\n", 7,
               "T.reinterpret of a float16's bits as int16 is outside the subset tilec supports");
    expect_err(KERNEL_HEAD "        B[0] = T.reinterpret(B[1], \"int16\")\n", 7, "T.reinterpret needs dtypes of the same size");
    expect_err(KERNEL_HEAD "        B[0] = T.reinterpret(B[1], 3)\n", 7, "T.reinterpret needs a dtype");
}

/* TileLang's MMA emitter at block level (mma_emitter.c): C = A @ B^T over
 * two K blocks of two k-slices each, stored through the emitter's 16 x 16
 * tile layout C_shared[i // 16, j // 16, i % 16, j % 16]; checked against a
 * plain matrix product. */
#define MMA_SRC(EXTRA) HDR \
    "from tilelang.intrinsics.mma_macro_generator import TensorCoreIntrinEmitter\n" \
    "em = TensorCoreIntrinEmitter(a_dtype='float32', b_dtype='float32', accum_dtype='float32',\n" \
    "                             a_transposed=False, b_transposed=True, block_row_warps=2, block_col_warps=1,\n" \
    "                             warp_row_tiles=16, warp_col_tiles=16, chunk=16)\n" \
    "@T.prim_func\n" \
    "def main(A: T.Tensor((32, 32), 'float32'), B: T.Tensor((16, 32), 'float32'), C: T.Tensor((32, 16), 'float32')):\n" \
    "    with T.Kernel(1, threads=64) as bx:\n" \
    "        A_s = T.alloc_shared((32, 16), 'float32')\n" \
    "        B_s = T.alloc_shared((16, 16), 'float32')\n" \
    "        C_s = T.alloc_shared((2, 1, 16, 16), 'float32')\n" \
    "        A_l = T.alloc_local((em.warp_rows * em.local_size_a,), 'float32')\n" \
    "        B_l = T.alloc_local((em.warp_cols * em.local_size_b,), 'float32')\n" \
    "        C_l = T.alloc_local((em.warp_rows * em.warp_cols * em.local_size_out,), 'float32')\n" \
    "        T.clear(C_l)\n" \
    "        for ko in T.serial(2):\n" \
    "            T.copy(A[0, ko * 16], A_s)\n" \
    "            T.copy(B[0, ko * 16], B_s)\n" \
    "            for ki in T.serial(16 // em.micro_size_k):\n" \
    "                em.ldmatrix_a(A_l, A_s, ki)\n" \
    "                em.ldmatrix_b(B_l, B_s, ki)\n" \
    "                em.mma(A_l, B_l, C_l)\n" \
    "        em.stmatrix(C_l, C_s)\n" \
    "        for i, j in T.Parallel(32, 16):\n" \
    "            C[i, j] = C_s[i // 16, j // 16, i % 16, j % 16]\n" EXTRA

Test(frontend_interp, mma_emitter_block_level)
{
    res_t *x = compile_ok(MMA_SRC(""), 0, NULL);
    static float A[32 * 32], B[16 * 32], C[32 * 16];
    for (int i = 0; i < 32 * 32; i++) A[i] = (float)((i * 7) % 11) - 5;
    for (int i = 0; i < 16 * 32; i++) B[i] = (float)((i * 5) % 9) - 4;
    void *args[] = {A, B, C};
    interp_ok(x, args, NULL);
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < 16; j++) {
            float want = 0;
            for (int k = 0; k < 32; k++) want += A[i * 32 + k] * B[j * 32 + k];
            cr_assert_float_eq(C[i * 16 + j], want, 1e-3, "C[%d, %d] = %g, want %g", i, j, C[i * 16 + j], want);
        }
    done(x);
}

Test(frontend_errors, mma_emitter)
{
    /* the register buffers the emitter took hold nothing: reading one is a diagnostic */
    expect_err(MMA_SRC("        C[0, 0] = C_l[0]\n"), 28, "'C_l' belongs to the MMA emitter");
    expect_err(HDR "from tilelang.intrinsics.mma_macro_generator import TensorCoreIntrinEmitter\n"
               "em = TensorCoreIntrinEmitter(reduce_k=2)\n", 5, "reduce_k or num_elems_per_byte other than 1");
}
#undef MMA_SRC

/* A run-time while over a T.alloc_var (exec_rt_while): each block strides
 * through the rows; through a temporary (t = i ... i = t + S) and with <=. */
Test(frontend_interp, while_on_run_time_condition)
{
    const char *src = HDR
        "@T.prim_func\n"
        "def main(A: T.Tensor((11,), \"float32\"), B: T.Tensor((11,), \"float32\"), C: T.Tensor((3,), \"int32\")):\n"
        "    with T.Kernel(3, threads=1) as bx:\n"
        "        i = T.alloc_var(T.int32)\n"
        "        n = T.alloc_var(T.int32)\n"
        "        i = bx\n"
        "        n = 0\n"
        "        while i < 11:\n"
        "            cur = i\n"
        "            B[cur] = A[cur] * 2 + bx\n"
        "            i = cur + 3\n"
        "        while 10 >= n:\n"
        "            n += 4\n"
        "        C[bx] = n\n";
    res_t *x = compile_ok(src, 0, NULL);
    float A[11], B[11] = {0};
    int32_t C[3] = {0};
    for (int i = 0; i < 11; i++) A[i] = (float)i;
    void *args[] = {A, B, C};
    interp_ok(x, args, NULL);
    for (int i = 0; i < 11; i++) cr_assert_float_eq(B[i], 2 * i + i % 3, 1e-6, "B[%d] = %g", i, B[i]);
    for (int b = 0; b < 3; b++) cr_assert_eq(C[b], 12);   /* 0, 4, 8 <= 10; 12 > 10 */
    done(x);
}

Test(frontend_interp, scalars_ranges_and_integer_division)
{
    const char *src = HDR
        "@T.prim_func\n"
        "def main(A: T.Tensor((10,), \"float32\"), B: T.Tensor((4,), \"float32\"),\n"
        "         C: T.Tensor((2,), \"int32\"), D: T.Tensor((4,), \"int32\")):\n"
        "    with T.Kernel(1, threads=1) as bx:\n"
        "        acc = T.alloc_var(\"float32\", init=0)\n"
        "        for k in range(1, 10, 3):\n"
        "            acc += A[k]\n"
        "        B[0] = acc\n"
        "        x = A[0] * 2\n"
        "        x = x + 1\n"
        "        B[1] = x\n"
        "        B[2] = T.if_then_else(A[0] > 0, 1.0, -1.0)\n"
        "        B[3] = 0\n"
        "        for i in range(9, 0, -4):\n"
        "            B[3] = B[3] * 10 + A[i]\n"
        "        D[0] = C[0] / C[1]\n"
        "        D[1] = C[0] // C[1]\n"
        "        D[2] = C[0] % C[1]\n"
        "        D[3] = T.ceildiv(C[0] * -1, C[1])\n";
    res_t *x = compile_ok(src, 0, NULL);
    float A[10], B[4] = {0};
    int32_t C[2] = {-7, 2}, D[4] = {0};
    for (int i = 0; i < 10; i++) A[i] = (float)i;
    void *args[] = {A, B, C, D};
    interp_ok(x, args, NULL);
    cr_assert_float_eq(B[0], 1 + 4 + 7, 1e-6);
    cr_assert_float_eq(B[1], 1, 1e-6);
    cr_assert_float_eq(B[2], -1, 1e-6);
    cr_assert_float_eq(B[3], (9 * 10 + 5) * 10 + 1, 1e-3);   /* i = 9, 5, 1 */
    cr_assert_eq(D[0], -3);
    cr_assert_eq(D[1], -4);
    cr_assert_eq(D[2], 1);
    cr_assert_eq(D[3], 4);
    done(x);
}

Test(frontend_interp, ragged_copy_atomics_and_symbols)
{
    const char *src = HDR
        "def f(bm=4):\n"
        "    n = T.dynamic(\"n\")\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((n, 2), \"float32\"), S: T.Tensor((2,), \"float32\"), Y: T.Tensor((n, 2), \"float32\")):\n"
        "        with T.Kernel(T.ceildiv(n, bm), threads=32) as bx:\n"
        "            t = T.alloc_fragment((bm, 2), \"float32\")\n"
        "            r = T.alloc_fragment((2,), \"float32\")\n"
        "            T.copy(A[bx * bm, 0], t)\n"
        "            T.reduce_sum(t, r, dim=0)\n"
        "            T.atomic_add(S, r)\n"
        "            for i, j in T.Parallel(bm, 2):\n"
        "                t[i, j] = t[i, j] * 2 + 1\n"
        "            T.copy(t, Y[bx * bm:(bx + 1) * bm, :])\n"
        "    return main\n";
    tilec_define_t defs[] = {{"n", "6"}};
    res_t *x = compile_ok(src, 1, defs);
    cr_assert_eq(x->r.nsyms, 1);
    cr_assert_eq(x->r.sym_values[0], 6);
    float A[12], S[2] = {0, 0}, Y[12];
    for (int i = 0; i < 12; i++) { A[i] = (float)(i + 1); Y[i] = -5; }
    void *args[] = {A, S, Y};
    interp_ok(x, args, x->r.sym_values);
    cr_assert_float_eq(S[0], 1 + 3 + 5 + 7 + 9 + 11, 1e-5);   /* rows past n read as 0 */
    cr_assert_float_eq(S[1], 2 + 4 + 6 + 8 + 10 + 12, 1e-5);
    for (int i = 0; i < 12; i++) cr_assert_float_eq(Y[i], A[i] * 2 + 1, 1e-5);
    done(x);
}

Test(frontend_errors, loop_index_past_on_chip_buffer)
{
    expect_err(KERNEL_HEAD
               "        s = T.alloc_fragment((32,), \"float32\")\n"
               "        for i in T.Parallel(64):\n"
               "            s[i] = 0\n", 9, "this index ranges over 0..63 in its loops, outside dimension 0 of 's' (size 32)");
}

Test(frontend, guarded_loop_index_is_accepted)
{
    res_t *x = compile_ok(KERNEL_HEAD
                          "        s = T.alloc_fragment((32,), \"float32\")\n"
                          "        for i in T.Parallel(64):\n"
                          "            if i < 32:\n"
                          "                s[i] = T.if_then_else(i > 0, s[i - 1], 0)\n"
                          "            B[i] = s[i % 32] if i < 32 else s[i - 32]\n", 0, NULL);
    done(x);
}

Test(frontend, entry_by_module_binding)
{
    const char *src = HDR
        "def make(n):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((n,), \"float32\")):\n"
        "        with T.Kernel(1) as bx:\n"
        "            T.clear(A)\n"
        "    return main\n"
        "small = make(4)\n"
        "big = make(n=4096)\n";
    res_t *x = compile_e(src, "big", 0, NULL);
    cr_assert_eq(x->rc, 0, "%s", tilec_diag_text(&x->d));
    cr_assert_str_eq(K(x)->name, "big");
    cr_assert_str_eq(x->r.entry, "big");
    cr_assert_eq(cint(K(x)->bufs[0]->shape[0]), 4096);
    done(x);
}

/* ---- TileLang's decorator layer and eager style ----------------------------- */

static const char *EAGER =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "from tilelang.autotuner import *\n"
    "import argparse\n"
    "\n"
    "@autotune(configs=[{\"block\": 8}], warmup=3, rep=5)\n"
    "@tilelang.jit(target=\"cuda\", execution_backend=\"cython\", verbose=True,\n"
    "              pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True,\n"
    "                            tilelang.PassConfigKey.TIR_DISABLE_VECTORIZE: False, \"tl.x\": 16})\n"
    "def scale(A, block, factor=2.0, dtype=T.float32):\n"
    "    M, N = T.const(\"M, N\")\n"
    "    A: T.Tensor((M, N), dtype)\n"
    "    B = T.empty((M, N), dtype)\n"
    "    with T.Kernel(T.ceildiv(M, block)) as bx:\n"
    "        for i, j in T.Parallel(block, N):\n"
    "            B[bx * block + i, j] = A[bx * block + i, j] * factor\n"
    "    return B\n";

Test(frontend, eager_kernel_with_jit_and_autotune)
{
    tilec_define_t defs[] = {{"block", "8"}, {"M", "16"}};
    res_t *x = compile_ok(EAGER, 2, defs);
    tilec_ir_kernel_t *k = K(x);
    cr_assert_str_eq(k->name, "scale");
    cr_assert_eq(k->nparams, 2);
    cr_assert_str_eq(k->bufs[0]->name, "A");
    cr_assert_str_eq(k->bufs[1]->name, "B");
    cr_assert_eq(k->out_mask, 2u, "T.empty marks B as the output");
    cr_assert_eq(cint(k->bufs[0]->shape[0]), 16, "M comes from -D");
    cr_assert_eq(k->bufs[0]->shape[1]->kind, TILEC_EX_VAR, "N without -D stays a symbol");
    cr_assert_eq(x->r.nsyms, 1);
    cr_assert_eq(x->r.npass_configs, 3);
    cr_assert_str_eq(x->r.pass_config_keys[0], "tl.enable_fast_math");
    cr_assert_str_eq(x->r.pass_config_values[0], "True");
    cr_assert_str_eq(x->r.pass_config_keys[1], "tir.disable_vectorize");
    cr_assert_str_eq(x->r.pass_config_values[1], "False");
    cr_assert_str_eq(x->r.pass_config_keys[2], "tl.x");
    cr_assert_str_eq(x->r.pass_config_values[2], "16");
    done(x);
}

Test(frontend_errors, eager_mistakes)
{
    tilec_define_t defs[] = {{"block", "8"}};
    /* a tensor declared after the kernel block started */
    expect_err_e(HDR "@tilelang.jit\ndef f(A, block):\n    N = T.const(\"N\")\n    A: T.Tensor((N,), \"float32\")\n"
                 "    with T.Kernel(1) as bx:\n        B = T.empty((N,), \"float32\")\n        T.copy(A, B)\n",
                 NULL, 1, defs, 9, "declare every tensor");
    expect_err(HDR "A: T.Tensor((4,), \"float32\")\n", 4, "declares a tensor only in an eager-style");
    expect_err(HDR "M = T.const(\"M, 3\")\n", 4, "is not a list of names");
    expect_err(HDR "@tilelang.jit(pass_configs={1: True})\ndef f():\n    pass\n", 4,
               "a pass_configs key must be a string");
}

/* ---- core/pass_safe_memory.c ------------------------------------------------ */

/* Runs the safe-memory pass on src; the number of guarded accesses. */
static int guards_of(const char *src, int ndefs, const tilec_define_t *defs)
{
    res_t *x = compile_ok(src, ndefs, defs);
    int n = -1;
    char err[256];
    cr_assert_eq(tilec_pass_safe_memory(&x->a, K(x), &n), 0);
    cr_assert_eq(tilec_ir_verify(x->r.module, err, sizeof err), 0, "verifier after the pass: %s", err);
    done(x);
    return n;
}

static const char *RAGGED =
    HDR
    "def f(M=37, N=5, blk=16):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"float32\"), Y: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(M, blk)) as bx:\n"
    "            m = T.alloc_fragment((blk,), \"float32\")\n"
    "            for i in T.Parallel(blk):\n"
    "                m[i] = X[bx * blk + i, 0]\n"
    "            for i, k in T.Parallel(blk, N):\n"
    "                Y[bx * blk + i, k] = m[i]\n"
    "    return main\n";

Test(safe_memory, ragged_accesses_are_guarded_even_ones_are_not)
{
    tilec_define_t even[] = {{"M", "64"}};
    cr_expect_eq(guards_of(RAGGED, 0, NULL), 2, "the load of X and the store of Y at M=37");
    cr_expect_eq(guards_of(RAGGED, 1, even), 0, "M=64 tiles evenly: nothing to guard");
}

Test(safe_memory, prover_uses_loops_symbols_and_conditions)
{
    /* a loop over the symbolic dimension itself, and a kernel that guards itself */
    cr_expect_eq(guards_of(HDR "N = T.dynamic('n')\n@T.prim_func\n"
                           "def main(A: T.Tensor((N,), 'float32'), B: T.Tensor((N,), 'float32')):\n"
                           "    with T.Kernel(T.ceildiv(N, 32)) as bx:\n"
                           "        for i in T.Parallel(N):\n"
                           "            B[i] = A[i]\n"
                           "        for i in T.Parallel(32):\n"
                           "            if bx * 32 + i < N:\n"
                           "                B[bx * 32 + i] = T.if_then_else(bx * 32 + i < N, A[bx * 32 + i], 0)\n",
                           0, NULL), 0);
    /* a symbolic ragged edge, a negative offset and an index read from a tensor are guarded */
    cr_expect_eq(guards_of(HDR "N = T.dynamic('n')\n@T.prim_func\n"
                           "def main(A: T.Tensor((N,), 'float32'), I: T.Tensor((4,), 'int32')):\n"
                           "    with T.Kernel(T.ceildiv(N, 32)) as bx:\n"
                           "        for i in T.Parallel(32):\n"
                           "            A[bx * 32 + i] = 1\n"
                           "        for i in T.Parallel(4):\n"
                           "            A[I[i]] = A[i - 1]\n",
                           0, NULL), 3);
}

/* Repeating an empty string, list or tuple is empty whatever the count:
 * O(1), not a loop of 10**11 steps (issue 11, found by fuzzing). */
Test(frontend, empty_sequence_repetition_is_constant_time)
{
    res_t *x = compile_ok(HDR "E = \"\" * 10**11\nL = [] * 10**11\nP = () * 10**11\nQ = 10**11 * []\n"
                              "N = len(E) + len(L) + len(P) + len(Q)\n"
                              "@T.prim_func\ndef main(A: T.Tensor((64,), \"float32\")):\n"
                              "    with T.Kernel(1, threads=64) as bx:\n"
                              "        for i in T.Parallel(64):\n"
                              "            A[i] = N\n",
                          0, NULL);
    done(x);
    /* a non-empty one still meets the size limit */
    expect_err(HDR "E = \"ab\" * 10**11\n", 0, "too long");
}

/* Issue 11: names are hashed (environments, module constants, the kernel's
 * taken names).  Many module constants, a local shadowing one of them, and
 * a macro inlined many times (each inlining makes a fresh loop variable
 * `t`, named t, t_1, t_2, ...) must give exactly the values and names a scan gave. */
Test(frontend, many_names_hashed)
{
    size_t cap = 1 << 20, len = 0;
    char *src = malloc(cap);
    int i, j, nt = 0;
    res_t *x;
    cr_assert(src);
    len += (size_t)snprintf(src + len, cap - len, HDR);
    for (i = 0; i < 3000; i++) len += (size_t)snprintf(src + len, cap - len, "c%d = %d\n", i, i * 3);
    len += (size_t)snprintf(src + len, cap - len,
                            "c17 = c2999 + 1\n"
                            "@T.macro\n"
                            "def bump(A, k):\n"
                            "    for t in T.serial(2):\n"
                            "        A[t] = A[t] + k\n"
                            "@T.prim_func\n"
                            "def main(A: T.Tensor((c1000,), \"float32\")):\n"
                            "    with T.Kernel(1, threads=32) as bx:\n"
                            "        c5 = 7\n"
                            "        for r in list(range(200)):\n"
                            "            bump(A, c5 + c17)\n");
    x = compile_ok(src, 0, NULL);
    cr_expect_eq(cint(K(x)->bufs[0]->shape[0]), 3000);
    for (i = 0; i < K(x)->nvars; i++) {
        const char *n = K(x)->vars[i]->name;
        if (n[0] == 't' && (n[1] == 0 || n[1] == '_')) nt++;
        for (j = 0; j < i; j++) cr_assert(strcmp(n, K(x)->vars[j]->name), "duplicate var name %s", n);
    }
    cr_expect_eq(nt, 200);
    done(x);
    free(src);
}

Test(frontend_errors, scalar_parameters)
{
    expect_err(HDR "@T.prim_func\n"
                   "def main(A: T.Tensor((8,), \"float32\"), alpha: T.float32):\n"
                   "    with T.Kernel(1) as bx:\n"
                   "        A[0] = alpha\n",
               5, "scalar kernel parameter 'alpha: float32' needs its value at compile time: pass -D alpha=VALUE");
    expect_err(HDR "@tilelang.jit(out_idx=[1])\n"
                   "def f():\n"
                   "    @T.prim_func\n"
                   "    def main(A: T.Tensor((8,), \"float32\"), n: T.int32):\n"
                   "        with T.Kernel(1) as bx:\n"
                   "            A[0] = n\n"
                   "    return main\n",
               0, "out_idx 1 names a scalar parameter");
}

/* a slice extent seen through a temporary is refused once the temporary is assigned again */
Test(frontend_errors, slice_through_reassigned_temporary)
{
    expect_err(HDR "@T.prim_func\n"
                   "def main(A: T.Tensor((16,), \"float32\"), B: T.Tensor((16,), \"float32\")):\n"
                   "    with T.Kernel(4) as bx:\n"
                   "        s = T.alloc_shared((4,), \"float32\")\n"
                   "        h0 = bx * 4\n"
                   "        h1 = h0 + 4\n"
                   "        T.copy(A[h0:h1], s)\n"
                   "        h0 = bx * 2\n"
                   "        T.copy(s, B[0:4])\n",
               10, "the extent of this slice depends on 'h0', which is assigned more than once");
}

/* Looking through temporaries turns a DAG into a tree: x_{i+1} = x_i + x_i
 * forty times would expand 2^40 nodes.  The walk is bounded: a diagnostic
 * (or an answer), not a hang. */
Test(frontend_errors, slice_through_doubling_temporaries_is_bounded)
{
    expect_err("import tilelang.language as T\n@T.prim_func\ndef main(A: T.Tensor((16,), \"float32\")):\n    with T.Kernel(4) as bx:\n        s = T.alloc_shared((4,), \"float32\")\n        x0 = bx * 4\n        x1 = x0 + x0\n        x2 = x1 + x1\n        x3 = x2 + x2\n        x4 = x3 + x3\n        x5 = x4 + x4\n        x6 = x5 + x5\n        x7 = x6 + x6\n        x8 = x7 + x7\n        x9 = x8 + x8\n        x10 = x9 + x9\n        x11 = x10 + x10\n        x12 = x11 + x11\n        x13 = x12 + x12\n        x14 = x13 + x13\n        x15 = x14 + x14\n        x16 = x15 + x15\n        x17 = x16 + x16\n        x18 = x17 + x17\n        x19 = x18 + x18\n        x20 = x19 + x19\n        x21 = x20 + x20\n        x22 = x21 + x21\n        x23 = x22 + x22\n        x24 = x23 + x23\n        x25 = x24 + x24\n        x26 = x25 + x25\n        x27 = x26 + x26\n        x28 = x27 + x27\n        x29 = x28 + x28\n        x30 = x29 + x29\n        x31 = x30 + x30\n        x32 = x31 + x31\n        x33 = x32 + x32\n        x34 = x33 + x33\n        x35 = x34 + x34\n        x36 = x35 + x35\n        x37 = x36 + x36\n        x38 = x37 + x37\n        x39 = x38 + x38\n        x40 = x39 + x39\n        y = x40 + 4\n        T.copy(A[x40:y], s)\n", 0, "is not a compile-time constant");
}

/* Hopper/Blackwell objects read at block level (wsops.c): what has no
 * block-level meaning is named; misuse is a diagnostic. */
Test(frontend_errors, warp_specialized_objects)
{
    expect_err(KERNEL_HEAD "        b = T.alloc_barrier([128, 128])\n        T.barrier_arrive(b[2])\n", 8,
               "barrier index 2 is out of range for 2 barriers");
    expect_err(KERNEL_HEAD "        T.barrier_wait(A, 0)\n", 7, "T.barrier_wait takes a barrier from T.alloc_barrier");
    expect_err(KERNEL_HEAD "        b = T.alloc_barrier(0)\n", 7, "the arrive count must be positive");
    expect_err(KERNEL_HEAD "        s = T.alloc_shared((64,), \"float32\")\n        b = T.alloc_barrier(1)\n"
               "        T.tma_copy(B, s, barrier=b, cluster_mask=3)\n", 9, "clusters are outside the subset");
    expect_err(KERNEL_HEAD "        with T.ws(0) as w:\n            pass\n", 7, "`with T.ws(...)` binds no name");
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.ws(0):\n        pass\n", 6,
               "T.ws must be inside the `with T.Kernel(...)` block");
    expect_err(KERNEL_HEAD "        tx = T.get_thread_binding()\n        B[tx % 64] = 1.0\n        T.sync_threads()\n", 9,
               "T.sync_threads after a thread index");
    expect_err(KERNEL_HEAD "        tx = T.get_thread_binding()\n        for i in T.Parallel(4):\n            B[i] = tx\n", 8,
               "T.Parallel after a thread index");
    expect_err(KERNEL_HEAD "        tx = T.thread_binding(0, 64, thread=\"threadIdx.x\")\n", 7,
               "must cover the block's 128 threads");
    expect_err(KERNEL_HEAD "        B[T.get_thread_binding()] = 0\n", 7, "only read as a statement");
    expect_err(KERNEL_HEAD "        c = T.alloc_fragment((8, 8), \"float32\")\n        a = T.alloc_shared((8, 8), \"float16\")\n"
               "        T.tcgen05_gemm(a, a, c, mbar=None, use_2cta=True)\n", 9, "clusters are outside the subset");
}

Test(frontend_errors, runtime_bit_operations)
{
    expect_err(KERNEL_HEAD "        for i in T.Parallel(64):\n            B[i] = T.cast(i << 40, \"float32\")\n", 8,
               "shift count 40 is out of range for int32");
    expect_err(KERNEL_HEAD "        for i in T.Parallel(64):\n            B[i] = B[i] & 1\n", 8,
               "operator & needs integers, got float32");
    expect_err(KERNEL_HEAD "        for i in T.Parallel(64):\n            B[i] = ~B[i]\n", 8,
               "operator ~ needs an integer, got float32");
}

Test(frontend_errors, reviews)
{
    expect_err(KERNEL_HEAD "        v = T.Tensor((32, 32), \"float16\", A.data)\n", 7,
               "the view has 1024 elements but 'A' has 4096");
    expect_err(KERNEL_HEAD "        v = T.view(B, dtype=\"int32\")\n", 7, "reinterprets its float32 bits");
    expect_err(KERNEL_HEAD "        v = T.reshape(B, (8, 8))\n        T.fill(v, 0)\n", 8,
               "T.fill / T.clear on a re-view of 'B'");
    expect_err(KERNEL_HEAD "        f = T.alloc_fragment((8, 8), \"float32\")\n        v = T.reshape(f, (64,))\n"
               "        T.cumsum(v)\n", 9, "T.cumsum on a re-view of 'f'");
    expect_err(KERNEL_HEAD "        s = T.alloc_shared((4, 4), \"float16\")\n        T.im2col(A, s, 0, 0, 3, 1, 1, 1)\n", 8,
               "T.im2col takes a 4-D (N, H, W, C) global image tensor");
}
