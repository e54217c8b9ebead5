/*
 * tests/test_language_compat.c — constructs of TileLang's example files
 * (docs/tilelang-compat.md): T.Kernel with no grid, T.gemm_sp with
 * tilelang's get_e_factor, per-thread work on a thread's own arrays
 * (T.copy, shifts, T.device_assert, data-dependent local indices),
 * `from SIBLING import ...` of a file beside the program, and
 * T.PersistentTileScheduler (plain and in warp roles), checked against
 * hand-computed results like test_language.c (lang_harness.h), and the
 * diagnostics of the sibling import.  Run from the repository root.
 */
#include "lang_harness.h"

#include <unistd.h>

Test(lang, kernel_with_no_grid_is_one_block)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/kernel_nogrid.py", NULL, 0, fill_pattern);
    for (i = 0; i < 24; i++) EXPECT_NEAR(F(r, 1)[i], 2 * pattern(0, i) + 1, "Y[%d]", i);
    run_free(&r);
}

/* ---- T.gemm_sp ------------------------------------------------------------ */

static const int pairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};

static uint16_t to_bf16(double v) /* exact for the pattern's quarters */
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

/* bf16 program: A_sparse (16 x 32), E (16 x 4), B (64 x 8); field f of E's
 * element k is pair (k * 4 + f) % 6 */
static void fill_sp_bf16(int i, void *data, int64_t count, tilec_elem_t e)
{
    int64_t k;
    int f;
    if (i == 1) {
        for (k = 0; k < count; k++) {
            uint16_t w = 0;
            for (f = 0; f < 4; f++) {
                const int *p = pairs[(k * 4 + f) % 6];
                w |= (uint16_t)((p[0] | p[1] << 2) << (4 * f));
            }
            ((int16_t *)data)[k] = (int16_t)w;
        }
        return;
    }
    if (e == TILEC_ELEM_BFLOAT16) {
        for (k = 0; k < count; k++) ((uint16_t *)data)[k] = to_bf16(pattern(i, k));
        return;
    }
    fill_pattern(i, data, count, e);
}

Test(lang, sparse_gemm_bf16_two_of_four)
{
    run_t r;
    int m, n, k, M = 16, N = 8, K = 64;
    run_entry(&r, "tests/lang/gemm_sp.py", "sp_bf16", NULL, 0, fill_sp_bf16);
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            double s = 0;
            for (k = 0; k < K; k++) {
                int g = k / 4, el = m * (K / 16) + g / 4, f = g % 4;   /* the group, its E element and field */
                const int *p = pairs[(el * 4 + f) % 6];
                double a = k % 4 == p[0] ? pattern(0, m * (K / 2) + 2 * g)
                         : k % 4 == p[1] ? pattern(0, m * (K / 2) + 2 * g + 1) : 0.0;
                s += a * pattern(2, k * N + n);
            }
            EXPECT_NEAR(F(r, 3)[m * N + n], s, "C[%d,%d]", m, n);
        }
    run_free(&r);
}

/* f32 program: A_sparse (8 x 8, read as K/2 x M), E (2 x 8, K/8 x M),
 * B (4 x 16, N x K); field f of E[j, m] is position (m + j + f) % 2 */
static void fill_sp_f32(int i, void *data, int64_t count, tilec_elem_t e)
{
    int64_t k;
    int f;
    if (i == 1) {
        for (k = 0; k < count; k++) {
            int j = (int)(k / 8), m = (int)(k % 8);
            uint16_t w = 0;
            for (f = 0; f < 4; f++) w |= (uint16_t)(((m + j + f) % 2 ? 0xE : 0x4) << (4 * f));
            ((int16_t *)data)[k] = (int16_t)w;
        }
        return;
    }
    fill_pattern(i, data, count, e);
}

Test(lang, sparse_gemm_f32_one_of_two_transposed)
{
    run_t r;
    int m, n, k, M = 8, N = 4, K = 16;
    run_entry(&r, "tests/lang/gemm_sp.py", "sp_f32", NULL, 0, fill_sp_f32);
    for (m = 0; m < M; m++)
        for (n = 0; n < N; n++) {
            double s = 0;
            for (k = 0; k < K; k++) {
                int g = k / 2, j = g / 4, f = g % 4;
                int pos = (m + j + f) % 2;
                double a = k % 2 == pos ? pattern(0, g * M + m) : 0.0;
                s += a * pattern(2, n * K + k);
            }
            EXPECT_NEAR(F(r, 3)[m * N + n], s, "C[%d,%d] (C cleared: clear_accum)", m, n);
        }
    run_free(&r);
}

/* ---- per-thread code on the thread's own arrays ------------------------------ */

Test(lang, thread_own_arrays_copies_shifts_and_data_dependent_indices)
{
    run_t r;
    int t, i;
    run_file(&r, "tests/lang/thread_own.py", NULL, 0, fill_pattern);
    for (t = 0; t < 4; t++) {
        int pos[2] = {0, 0}, cnt = 0;
        for (i = 0; i < 8; i++) {
            float x = (float)pattern(0, t * 8 + i);
            EXPECT_NEAR(F(r, 1)[t * 8 + i], 2 * x, "Y[%d,%d]", t, i);
            if (x > 0) {
                if (cnt < 2) pos[cnt] = i;   /* past the end: the store is skipped */
                cnt++;
            }
        }
        cr_expect_eq(I32(r, 2)[t], (pos[0] << 8) | pos[1], "S[%d] = %d", t, I32(r, 2)[t]);
        cr_expect_eq(I32(r, 3)[t], cnt >> 1, "R[%d] = %d", t, I32(r, 3)[t]);
    }
    run_free(&r);
}

/* ---- sibling imports ------------------------------------------------------ */

Test(lang, import_from_a_sibling_file)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/imports_sibling.py", NULL, 0, fill_pattern);
    for (i = 0; i < 8; i++) EXPECT_NEAR(F(r, 1)[i], 3 * pattern(0, i) + 5 + 6, "Y[%d]", i);
    run_free(&r);
}

static void expect_load_error(const char *path, const char *want)
{
    tilec_context_t *ctx = NULL;
    tilec_program_t *p = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    cr_assert_neq(tilec_program_load_file(ctx, path, NULL, 0, NULL, &p), TILEC_OK, "%s loaded", path);
    cr_expect(strstr(tilec_context_message(ctx), want) != NULL, "%s: want '%s' in: %s", path, want,
              tilec_context_message(ctx));
    tilec_context_destroy(ctx);
}

Test(lang, sibling_file_errors_name_the_sibling)
{
    expect_load_error("tests/siblings/bad_main.py",
                      "tests/siblings/bad_helper.py:3:5: error: assertion failed: block 48 must be a multiple of 32");
    expect_load_error("tests/siblings/uses_host.py", "'bad_helper.host_only(...)' is outside the subset");
}

/* ---- T.PersistentTileScheduler (tests/lang/tile_scheduler.py) -------------------- */

/* Linear tile t of the 4 x 5 grid, TileLang's swizzle of panel 2 (M fastest), by hand. */
static const int sched_tile[20][2] = {
    {0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {3, 0}, {3, 1},   /* panel n 0-1 */
    {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 2}, {2, 3}, {3, 2}, {3, 3},   /* panel n 2-3 */
    {0, 4}, {1, 4}, {2, 4}, {3, 4}                                    /* the narrow last panel */
};

Test(lang, persistent_tile_scheduler_swizzled_ragged)
{
    run_t r;
    int t, u, v;
    run_entry(&r, "tests/lang/tile_scheduler.py", "sched_plain", NULL, 0, fill_pattern);
    for (t = 0; t < 20; t++) {
        int m = sched_tile[t][0], n = sched_tile[t][1], e = m * 5 + n;
        int32_t c0 = (int32_t)((e * 13 + 5 * 5) % 41) - 20;
        cr_expect_eq(I32(r, 2)[e], t, "Lin[%d,%d] = %d: linear tile %d", m, n, I32(r, 2)[e], t);
        cr_expect_eq(I32(r, 3)[e], t / 3, "Wav[%d,%d] = %d: wave %d", m, n, I32(r, 3)[e], t / 3);
        cr_expect_eq(I32(r, 4)[e], t % 3, "Who[%d,%d] = %d: worker %d", m, n, I32(r, 4)[e], t % 3);
        cr_expect_eq(I32(r, 5)[e], c0 + 1, "Cnt[%d,%d]: each tile once", m, n);
        for (u = 0; u < 2; u++)
            for (v = 0; v < 2; v++) {
                int k = (m * 2 + u) * 10 + n * 2 + v;
                EXPECT_NEAR(F(r, 1)[k], (float)pattern(0, k) + 10 * m + n, "Out[%d,%d]", m * 2 + u, n * 2 + v);
            }
    }
    run_free(&r);
}

Test(lang, persistent_tile_scheduler_in_warp_roles)
{
    run_t r;
    int i, j, k;
    run_entry(&r, "tests/lang/tile_scheduler.py", "sched_roles", NULL, 0, fill_pattern);
    for (i = 0; i < 12; i++)
        for (j = 0; j < 8; j++) {
            double c = 0;
            for (k = 0; k < 3; k++) c += (k + 1) * (float)pattern(0, i * 24 + 8 * k + j);
            EXPECT_NEAR(F(r, 1)[i * 8 + j], c, "C[%d,%d] (tile %d of worker %d)", i, j, i / 4, i / 4 % 2);
        }
    run_free(&r);
}

/* The scheduler's forms outside the subset name themselves. */
static void expect_src_error(const char *src, const char *want)
{
    char path[] = "/tmp/tilec-sched-XXXXXX.py";
    int fd = mkstemps(path, 3);
    FILE *f;
    cr_assert(fd >= 0);
    f = fdopen(fd, "w");
    cr_assert(f);
    fputs(src, f);
    fclose(f);
    expect_load_error(path, want);
    unlink(path);
}

#define SCHED_HEAD "import tilelang\nimport tilelang.language as T\n\n\n@T.prim_func\n" \
    "def main(A: T.Tensor((8, 8), \"float32\")):\n    with T.Kernel(2, threads=256) as b:\n"

Test(lang, persistent_tile_scheduler_diagnostics)
{
    expect_src_error(SCHED_HEAD
                     "        s = T.PersistentTileScheduler(2, 2, num_workers=2)\n"
                     "        s.init(b)\n"
                     "        while s.valid():\n"
                     "            A[s.m_idx, s.n_idx] = 1.0\n",
                     ":11:13: error: a `while sched.valid():` loop ends with sched.next_tile()");
    expect_src_error(SCHED_HEAD
                     "        s = T.PersistentTileScheduler(2, 2, cluster_size=2)\n",
                     "cluster_size=2) schedules thread-block clusters; clusters are outside the subset");
    expect_src_error(SCHED_HEAD
                     "        s = T.PersistentTileScheduler(2, 2, num_workers=2)\n"
                     "        while s.valid():\n"
                     "            s.next_tile()\n",
                     "needs sched.init(worker_id) before it");
    expect_src_error(SCHED_HEAD
                     "        bar = T.alloc_barrier([128])\n"
                     "        s = T.PersistentTileScheduler(3, 1, num_workers=2)\n"
                     "        s.init(b)\n"
                     "        tx = T.get_thread_binding()\n"
                     "        if tx < 128:\n"
                     "            while s.valid():\n"
                     "                T.mbarrier_wait_parity(bar, s.current_iter & 1)\n"
                     "                s.next_tile()\n"
                     "            T.mbarrier_wait_parity(bar, 1)\n"
                     "        else:\n"
                     "            while s.valid():\n"
                     "                A[s.m_idx, 0] = 1.0\n"
                     "                T.mbarrier_arrive(bar)\n"
                     "                s.next_tile()\n",
                     ":16:13: error: a barrier operation after the persistent tile loop at line");
}

/* ---- warp roles' loops of a run-time trip count (tests/lang/ws_rt_loop.py) ------- */

static void fill_rt_counts(int i, void *data, int64_t count, tilec_elem_t e)
{
    if (i == 1) {   /* Cnt: 5 steps in block 0, 2 in block 1 */
        ((int32_t *)data)[0] = 5;
        ((int32_t *)data)[1] = 2;
        return;
    }
    fill_pattern(i, data, count, e);
}

Test(lang, warp_roles_loop_of_a_run_time_trip_count)
{
    run_t r;
    int b, i, j, k;
    const int cnt[2] = {5, 2};
    run_file(&r, "tests/lang/ws_rt_loop.py", NULL, 0, fill_rt_counts);
    for (b = 0; b < 2; b++)
        for (i = 0; i < 4; i++)
            for (j = 0; j < 8; j++) {
                double c = 0;
                for (k = 0; k < cnt[b]; k++) c += (k + 1) * (float)pattern(0, (b * 32 + 4 * k + i) * 8 + j);
                EXPECT_NEAR(F(r, 2)[(b * 4 + i) * 8 + j], c, "C[%d,%d,%d] (%d steps)", b, i, j, cnt[b]);
            }
    run_free(&r);
}

Test(lang, warp_roles_run_time_loop_diagnostics)
{
    /* a parity that is not a function of k mod a constant */
    expect_src_error(SCHED_HEAD
                     "        bar = T.alloc_barrier([128])\n"
                     "        n = T.alloc_var(\"int32\")\n"
                     "        n = T.cast(A[0, 0], \"int32\")\n"
                     "        tx = T.get_thread_binding()\n"
                     "        if tx < 128:\n"
                     "            for k in T.serial(n):\n"
                     "                T.mbarrier_wait_parity(bar, (k // 2) & 1)\n"
                     "        else:\n"
                     "            for k in T.serial(n):\n"
                     "                T.mbarrier_arrive(bar)\n",
                     ":14:46: error: this loop of warp roles runs a run-time number of times, and a barrier, parity or "
                     "condition of its barrier operations depends on the iteration otherwise than through `i % c`");
    /* the roles' loops of different run-time trip counts */
    expect_src_error(SCHED_HEAD
                     "        bar = T.alloc_barrier([128])\n"
                     "        n = T.alloc_var(\"int32\")\n"
                     "        n = T.cast(A[0, 0], \"int32\")\n"
                     "        tx = T.get_thread_binding()\n"
                     "        if tx < 128:\n"
                     "            for k in T.serial(n):\n"
                     "                T.mbarrier_wait_parity(bar, k & 1)\n"
                     "        else:\n"
                     "            for k in T.serial(n + 1):\n"
                     "                T.mbarrier_arrive(bar)\n",
                     "run different numbers of times (two run-time trip counts)");
    /* the state does not repeat within 4 periods (2 steps): bar2 completes a phase every 5 steps */
    expect_src_error(SCHED_HEAD
                     "        bar = T.alloc_barrier([128])\n"
                     "        bar2 = T.alloc_barrier([640])\n"
                     "        n = T.alloc_var(\"int32\")\n"
                     "        n = T.cast(A[0, 0], \"int32\")\n"
                     "        tx = T.get_thread_binding()\n"
                     "        if tx < 128:\n"
                     "            for k in T.serial(n):\n"
                     "                T.mbarrier_wait_parity(bar, k & 1)\n"
                     "        else:\n"
                     "            for k in T.serial(n):\n"
                     "                T.mbarrier_arrive(bar)\n"
                     "                T.mbarrier_arrive(bar2)\n",
                     "does not come back to where it started");
    /* a warp vote in a role's per-thread code */
    expect_src_error(SCHED_HEAD
                     "        S = T.alloc_shared((128,), \"float32\")\n"
                     "        bar = T.alloc_barrier([128])\n"
                     "        tx = T.get_thread_binding()\n"
                     "        if tx < 128:\n"
                     "            T.mbarrier_wait_parity(bar, 0)\n"
                     "            v = T.any_sync(S[tx] < 1.0)\n"
                     "        else:\n"
                     "            T.mbarrier_arrive(bar)\n",
                     ":13:17: error: T.any_sync, a warp vote, in a warp role's per-thread code is outside the subset");
}
