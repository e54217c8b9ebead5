/*
 * tests/test_language_threads.c — the thread-level programs of tests/lang/
 * (warp-specialized roles, thread indices, grid synchronisation, lock-step
 * per-thread code with shuffles and shared exchanges, thread all-reduce),
 * checked against hand-computed results like test_language.c, whose
 * harness (lang_harness.h) they share.  Run from the repository root.
 */
#include "lang_harness.h"

Test(lang, warp_specialized_program_at_block_level)
{
    run_t r;
    int i, j, k;
    run_file(&r, "tests/lang/ws_blocklevel.py", NULL, 0, fill_pattern);
    for (i = 0; i < 32; i++)
        for (j = 0; j < 16; j++) {
            double s = 0;
            for (k = 0; k < 32; k++) s += pattern(0, i * 32 + k) * pattern(1, k * 16 + j);
            EXPECT_NEAR(F(r, 2)[i * 16 + j], s, "C[%d,%d]", i, j);
            EXPECT_NEAR(F(r, 3)[i * 16 + j], s, "D[%d,%d] (tensor memory, cleared at k == 0)", i, j);
            EXPECT_NEAR(F(r, 4)[i * 16 + j], pattern(4, i * 16 + j) + s, "E[%d,%d] (atomic_addx4)", i, j);
        }
    run_free(&r);
}

/* Warp roles ordered by their mbarriers (tests/lang/ws_roles.py): the
 * consumer role is written first; C through each role's own loop over a
 * two-stage ring, D through one loop around the roles with a value handed
 * back through shared memory from step 1 on, E from a producer role whose
 * code is per-thread. */
Test(lang, warp_roles_ordered_by_their_barriers)
{
    run_t r;
    int i, j, k;
    run_file(&r, "tests/lang/ws_roles.py", NULL, 0, fill_pattern);
    for (i = 0; i < 4; i++)
        for (j = 0; j < 16; j++) {
            double c = 0, d = 0;
            for (k = 0; k < 6; k++) {
                c += (k + 1) * pattern(0, (4 * k + i) * 16 + j);
                d += (k + 1) * (pattern(0, (4 * k + i) * 16 + j) + (k > 0 ? 1.0 : 0.0));
            }
            EXPECT_NEAR(F(r, 1)[i * 16 + j], c, "C[%d,%d] (the roles' loops fused)", i, j);
            EXPECT_NEAR(F(r, 2)[i * 16 + j], d, "D[%d,%d] (roles in one loop, a value handed back)", i, j);
        }
    for (i = 0; i < 16; i++)
        for (j = 0; j < 16; j++) {
            int f = (8 * i + j / 2) % 3;
            EXPECT_NEAR(F(r, 3)[i * 16 + j], 3 * (f ? pattern(0, i * 16 + j) : 0.0) + f,
                        "E[%d,%d] (a per-thread producer role, T.ptx_cp_async)", i, j);
        }
    run_free(&r);
}

/* Per-thread code after a thread index (tests/lang/thread_index.py). */
Test(lang, thread_index)
{
    run_t r;
    int b, t;
    run_file(&r, "tests/lang/thread_index.py", NULL, 0, fill_pattern);
    for (b = 0; b < 2; b++)
        for (t = 0; t < 32; t++) {
            double s = 0;
            int k;
            for (k = 0; k < 3; k++) s += (float)pattern(0, b * 96 + t * 3 + k);
            EXPECT_NEAR(F(r, 1)[b * 32 + t], s * (t + 1), "Y[%d,%d]", b, t);
            cr_expect_eq(I32(r, 2)[b * 32 + t], t % 16 - t / 16 + b, "Z[%d,%d]", b, t);
        }
    run_free(&r);
}

/* T.sync_grid(): phase 2 reads what every block wrote in phase 1 (tests/lang/sync_grid.py). */
Test(lang, sync_grid)
{
    run_t r;
    int b, i;
    double tot = 0;
    run_file(&r, "tests/lang/sync_grid.py", NULL, 0, fill_pattern);
    for (i = 0; i < 16; i++) tot += (float)pattern(0, i);
    for (b = 0; b < 4; b++) {
        double s = 0;
        for (i = 0; i < 4; i++) s += (float)pattern(0, b * 4 + i);
        EXPECT_NEAR(F(r, 1)[b], s, "P[%d]", b);
        for (i = 0; i < 4; i++) EXPECT_NEAR(F(r, 2)[b * 4 + i], 2 * (float)pattern(0, b * 4 + i) + tot, "Y[%d]", b * 4 + i);
    }
    run_free(&r);
}

/* Lock-step per-thread code: shuffles and a shared exchange (tests/lang/lockstep.py). */
Test(lang, lockstep_shuffles_and_shared_exchange)
{
    run_t r;
    int t, k;
    run_file(&r, "tests/lang/lockstep.py", NULL, 0, fill_pattern);
    for (t = 0; t < 64; t++) {
        double a = (float)pattern(0, t), sum = 0;
        EXPECT_NEAR(F(r, 1)[t], (float)pattern(0, t ^ 1), "X[%d]", t);
        EXPECT_NEAR(F(r, 2)[t], t % 16 + 4 < 16 ? (float)pattern(0, t + 4) : a, "D[%d]", t);
        EXPECT_NEAR(F(r, 3)[t], t % 32 >= 3 ? (float)pattern(0, t - 3) : a, "U[%d]", t);
        EXPECT_NEAR(F(r, 4)[t], (float)pattern(0, 63 - t), "S[%d]", t);
        for (k = t / 8 * 8; k < t / 8 * 8 + 8; k++) sum += (float)pattern(0, k);
        EXPECT_NEAR(F(r, 5)[t], sum, "R[%d]", t);
    }
    run_free(&r);
}

/* T.tvm_thread_allreduce over either thread dimension (tests/lang/thread_allreduce.py). */
Test(lang, thread_allreduce_sum_and_max)
{
    run_t r;
    int n, k, m;
    run_file(&r, "tests/lang/thread_allreduce.py", NULL, 0, fill_pattern);
    for (n = 0; n < 4; n++) {
        double s = 0;
        for (k = 0; k < 8; k++) s += 2 * (float)pattern(0, n * 8 + k);
        EXPECT_NEAR(F(r, 1)[n], s, "S[%d]", n);
        for (k = 0; k < 8; k++) {
            double mx = -1e9;
            for (m = 0; m < 4; m++) mx = fmax(mx, 2 * (float)pattern(0, m * 8 + k));
            EXPECT_NEAR(F(r, 2)[n * 8 + k], mx, "M[%d,%d]", n, k);
        }
    }
    run_free(&r);
}
