/*
 * tests/test_frontend_interp.c — frontend constructs checked by their
 * results in the reference interpreter (T.reinterpret of every bit
 * pattern, the MMA emitter at block level, run-time while, scalar ranges
 * and integer division, ragged copies and atomics).
 */
#include "frontend_harness.h"

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

/* TileLang's MMA emitter at block level (mma_emitter.c): C = A @ B^T over
 * two K blocks of two k-slices each, stored through the emitter's 16 x 16
 * tile layout C_shared[i // 16, j // 16, i % 16, j % 16]; checked against a
 * plain matrix product. */
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
