/*
 * tests/test_frontend.c — the frontend evaluator (frontend/eval.c and
 * friends): small tile programs compiled from strings, checked on the
 * structure of the IR they produce (grid, parameters, buffers, loop kinds,
 * copy regions, typing of mixed expressions, -D handling, symbols,
 * out_idx, TileLang's decorator layer and eager style).  Diagnostics are in
 * test_frontend_errors.c, semantics through the interpreter in
 * test_frontend_interp.c.
 */
#include "frontend_harness.h"

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

/* T.use_swizzle's order: an explicit one is the hint's second argument
 * (0 "row", 1 "column"), none keeps one argument; anything else is an error */
Test(frontend, use_swizzle_order)
{
    static const struct {
        const char *call;
        int nargs, order;
    } cases[] = {{"T.use_swizzle(4)", 1, -1}, {"T.use_swizzle(4, order=\"row\")", 2, 0},
                 {"T.use_swizzle(panel_size=4, order=\"column\")", 2, 1}, {"T.use_swizzle(4, \"column\", True)", 2, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[512];
        snprintf(src, sizeof src,
                 HDR "@T.prim_func\n"
                     "def main(A: T.Tensor((32, 16), \"float32\")):\n"
                     "    with T.Kernel(2, 2, threads=32) as (bx, by):\n"
                     "        %s\n"
                     "        A[bx, by] = 1.0\n",
                 cases[i].call);
        res_t *x = compile_ok(src, 0, NULL);
        tilec_ir_stmt_t *s = K(x)->body;
        cr_assert_eq(s->kind, TILEC_ST_HINT, "%s", cases[i].call);
        cr_assert_eq(s->u.hint.nargs, cases[i].nargs, "%s", cases[i].call);
        cr_assert_eq(cint(s->u.hint.args[0]), 4);
        if (cases[i].order >= 0)
            cr_assert_eq(cint(s->u.hint.args[1]), cases[i].order, "%s", cases[i].call);
        done(x);
    }
    expect_err(HDR "@T.prim_func\n"
                   "def main(A: T.Tensor((32, 16), \"float32\")):\n"
                   "    with T.Kernel(2, 2, threads=32) as (bx, by):\n"
                   "        T.use_swizzle(4, order=\"diagonal\")\n",
               7, "order must be \"row\" or \"column\"");
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

/* T.tfloat32 (and "tfloat32") is float32 storage. */
Test(frontend, tfloat32_is_float32)
{
    res_t *x = compile_ok(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), T.tfloat32), B: T.Tensor((4,), \"tfloat32\")):\n"
                          "    with T.Kernel(1) as bx:\n        T.copy(A, B)\n", 0, NULL);
    cr_assert_eq(K(x)->bufs[0]->dtype, TILEC_FLOAT32);
    cr_assert_eq(K(x)->bufs[1]->dtype, TILEC_FLOAT32);
    done(x);
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
