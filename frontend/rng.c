/*
 * frontend/rng.c — T.rng_init / T.rng_rand: per-thread random numbers.
 *
 * TileLang's generator is CUDA's curand Philox4_32_10: `T.rng_init(seed,
 * seq, off)` starts a stream, and the n-th `T.rng_rand()` after it returns a
 * uint32, word (off + n) % 4 of Philox4x32-10 (Salmon et al., "Parallel
 * random numbers: as easy as 1, 2, 3", SC'11) applied to the 128-bit
 * counter (lo32(c), hi32(c), lo32(seq), hi32(seq)) with c = (off + n) / 4
 * and the key (lo32(seed), hi32(seed)).  A counter-based generator is a
 * pure function of (seed, seq, draw number), so the frontend builds it from
 * integer arithmetic every backend and the interpreter already run (uint64
 * products of 32-bit words, shifts, masks and xors, one temporary per word
 * and round): the same bits everywhere, with no new IR.  The state is three
 * hidden T.alloc_var scalars (seed, seq and the next draw number).
 *
 * Where the draws happen in order (per-thread code, serial loops, a block of
 * one thread) each T.rng_rand() takes the next number.  Inside a
 * T.Parallel nest, whose iterations are independent, iteration i (its
 * row-major linear index) takes the numbers base + i * D + k, where D is
 * the number of T.rng_rand() calls written in the nest's body and k the
 * call's place among them; after the nest the stream has advanced by
 * extent * D.  That is what a serial run of the nest in one thread (how
 * TileLang runs a T.Parallel of a one-thread block) draws, when every
 * iteration makes its draws.
 *
 * seq defaults to TileLang's `tx + bx * threads`.  Block-level code of a
 * block of several threads has no thread of its own to draw for, so
 * T.rng_init there is a diagnostic.
 */
#include "eval_internal.h"

#include <string.h>

#define MASK32 0xffffffffLL
#define PHILOX_M0 0xD2511F53LL
#define PHILOX_M1 0xCD9E8D57LL
#define PHILOX_W0 0x9E3779B9LL
#define PHILOX_W1 0xBB67AE85LL

static tilec_ir_expr_t *u64(ev_t *ev, int64_t v) { return ev_chk(ev, tilec_ir_int(ev->a, v, TILEC_UINT64)); }
static tilec_ir_expr_t *bin(ev_t *ev, tilec_binop_t op, tilec_ir_expr_t *a, tilec_ir_expr_t *b)
{
    return ev_chk(ev, tilec_ir_binary(ev->a, op, a, b));
}
static tilec_ir_expr_t *lo32(ev_t *ev, tilec_ir_expr_t *x) { return bin(ev, TILEC_BIN_BITAND, x, u64(ev, MASK32)); }
static tilec_ir_expr_t *hi32(ev_t *ev, tilec_ir_expr_t *x) { return bin(ev, TILEC_BIN_SHR, x, u64(ev, 32)); }

/* A fresh scalar temporary assigned e; returns a reference to it. */
static tilec_ir_expr_t *let(ev_t *ev, const char *name, tilec_ir_expr_t *e, ast_loc_t loc)
{
    tilec_ir_var_t *v = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, name), e->dtype, TILEC_VAR_LET));
    tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_ASSIGN, loc);
    st->u.assign.var = v;
    st->u.assign.value = e;
    ev_emit(ev, st, loc);
    return ev_chk(ev, tilec_ir_varref(ev->a, v));
}

static tilec_ir_expr_t *load0(ev_t *ev, tilec_ir_buffer_t *b)
{
    tilec_ir_expr_t *idx[1];
    idx[0] = ex_int32(ev, 0);
    return ev_chk(ev, tilec_ir_load(ev->a, b, idx));
}

static void store0(ev_t *ev, tilec_ir_buffer_t *b, tilec_ir_expr_t *v, ast_loc_t loc)
{
    tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_STORE, loc);
    st->u.store.buf = b;
    st->u.store.idx = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof(tilec_ir_expr_t *)));
    st->u.store.idx[0] = ex_int32(ev, 0);
    st->u.store.value = v;
    ev_emit(ev, st, loc);
}

/* Word n % 4 of Philox4x32-10 for draw number n (uint64 expressions), as uint32. */
static tilec_ir_expr_t *philox(ev_t *ev, tilec_ir_expr_t *n, tilec_ir_expr_t *seed, tilec_ir_expr_t *seq, ast_loc_t loc)
{
    tilec_ir_expr_t *c4 = let(ev, "rng_n", n, loc), *q = bin(ev, TILEC_BIN_SHR, c4, u64(ev, 2));
    tilec_ir_expr_t *x = let(ev, "rng_x", lo32(ev, q), loc), *y = let(ev, "rng_y", hi32(ev, q), loc);
    tilec_ir_expr_t *z = let(ev, "rng_z", lo32(ev, seq), loc), *w = let(ev, "rng_w", hi32(ev, seq), loc);
    tilec_ir_expr_t *k0 = let(ev, "rng_k0", lo32(ev, seed), loc), *k1 = let(ev, "rng_k1", hi32(ev, seed), loc);
    tilec_ir_expr_t *word, *r;
    int round;
    for (round = 0; round < 10; round++) {
        /* the key after `round` bumps, within 32 bits */
        tilec_ir_expr_t *kx = lo32(ev, bin(ev, TILEC_BIN_ADD, k0, u64(ev, (PHILOX_W0 * round) & MASK32)));
        tilec_ir_expr_t *ky = lo32(ev, bin(ev, TILEC_BIN_ADD, k1, u64(ev, (PHILOX_W1 * round) & MASK32)));
        tilec_ir_expr_t *p0 = let(ev, "rng_p", bin(ev, TILEC_BIN_MUL, u64(ev, PHILOX_M0), x), loc);
        tilec_ir_expr_t *p1 = let(ev, "rng_p", bin(ev, TILEC_BIN_MUL, u64(ev, PHILOX_M1), z), loc);
        tilec_ir_expr_t *nx = bin(ev, TILEC_BIN_BITXOR, bin(ev, TILEC_BIN_BITXOR, hi32(ev, p1), y), kx);
        tilec_ir_expr_t *nz = bin(ev, TILEC_BIN_BITXOR, bin(ev, TILEC_BIN_BITXOR, hi32(ev, p0), w), ky);
        x = let(ev, "rng_x", nx, loc);
        y = let(ev, "rng_y", lo32(ev, p1), loc);
        z = let(ev, "rng_z", nz, loc);
        w = let(ev, "rng_w", lo32(ev, p0), loc);
    }
    word = bin(ev, TILEC_BIN_BITAND, c4, u64(ev, 3));
    r = ev_chk(ev, tilec_ir_select(ev->a, bin(ev, TILEC_BIN_EQ, word, u64(ev, 2)), z, w));
    r = ev_chk(ev, tilec_ir_select(ev->a, bin(ev, TILEC_BIN_EQ, word, u64(ev, 1)), y, r));
    r = ev_chk(ev, tilec_ir_select(ev->a, bin(ev, TILEC_BIN_EQ, word, u64(ev, 0)), x, r));
    return ex_cast(ev, r, TILEC_UINT32);
}

static tilec_ir_buffer_t *state_var(ev_t *ev, const char *name, tilec_ir_expr_t *init, ast_loc_t loc)
{
    tilec_ir_expr_t *dims[1];
    tilec_ir_buffer_t *b;
    dims[0] = ex_int32(ev, 1);
    b = ev_chk(ev, tilec_ir_buffer_add(ev->a, ev->k, ev_unique_buf(ev, name), TILEC_SCOPE_VAR, TILEC_UINT64, 1, dims));
    store0(ev, b, init, loc);
    return b;
}

value_t *rng_init(ev_t *ev, args_t *a, ast_loc_t at)
{
    args_t ar = *a;
    tilec_ir_expr_t *seq;
    int threads;
    BIND("T.rng_init", 1, "seed", "seq", "off", "generator");
    ev_require_kernel(ev, at, "T.rng_init");
    threads = ev->k->threads[0] * ev->k->threads[1] * ev->k->threads[2];
    if (!ev->thread_wrap && threads > 1)
        ev_fail(ev, at, "T.rng_init in block-level code of a block of %d threads: each TileLang thread draws from its "
                "own stream, which block-level code has no thread for; call it after a thread index "
                "(tx = T.get_thread_binding()), or use a block of one thread", threads);
    if (ev->rng_par.in_parallel) ev_fail(ev, at, "T.rng_init inside T.Parallel is outside the subset (start the stream before the loop)");
    if (a_[3] && a_[3]->kind != V_NONE &&
        (a_[3]->kind != V_STR || strcmp(a_[3]->u.s.s, "curandStatePhilox4_32_10_t")))
        ev_fail(ev, l_[3], "T.rng_init: the only generator is \"curandStatePhilox4_32_10_t\" (Philox4x32-10)");
    if (a_[1] && a_[1]->kind != V_NONE) {
        seq = ex_as(ev, a_[1], TILEC_UINT64, l_[1]);
    } else {   /* TileLang's default: tx + bx * threads (a one-thread block: bx) */
        tilec_ir_expr_t *bx = ex_cast(ev, ev_chk(ev, tilec_ir_varref(ev->a, ev->k->block[0])), TILEC_UINT64);
        seq = bin(ev, TILEC_BIN_MUL, bx, u64(ev, threads));
        if (ev->thread_vars[0] && ev->thread_wrap)
            seq = bin(ev, TILEC_BIN_ADD, seq, ex_cast(ev, ev_chk(ev, tilec_ir_varref(ev->a, ev->thread_vars[0])), TILEC_UINT64));
    }
    ev->rng.k = ev->k;
    ev->rng.seed = state_var(ev, "rng_seed", ex_as(ev, a_[0], TILEC_UINT64, l_[0]), at);
    ev->rng.seq = state_var(ev, "rng_seq", seq, at);
    ev->rng.ctr = state_var(ev, "rng_ctr",
                            a_[2] && a_[2]->kind != V_NONE ? ex_as(ev, a_[2], TILEC_UINT64, l_[2]) : u64(ev, 0), at);
    return ev->none;
}

value_t *rng_rand(ev_t *ev, args_t *a, ast_loc_t at)
{
    tilec_ir_expr_t *n;
    if (a->n || a->nkw) ev_fail(ev, at, "T.rng_rand takes no arguments");
    ev_require_kernel(ev, at, "T.rng_rand");
    if (ev->rng.k != ev->k || !ev->rng.ctr) ev_fail(ev, at, "T.rng_rand before T.rng_init in this kernel");
    if (ev->rng_par.active) {
        if (ev->in_rt_loop != ev->rng_par.loop_depth)
            ev_fail(ev, at, "T.rng_rand in a loop inside T.Parallel is outside the subset: the draws of one parallel "
                    "iteration must be a fixed count");
        if (!ev->rng_par.per)
            ev->rng_par.per = u64(ev, 0);   /* D: set when the nest ends (rng_parallel_end) */
        n = bin(ev, TILEC_BIN_ADD, bin(ev, TILEC_BIN_ADD, load0(ev, ev->rng.ctr), bin(ev, TILEC_BIN_MUL, ev->rng_par.lin,
                                                                                          ev->rng_par.per)),
                u64(ev, ev->rng_par.draws++));
    } else {
        n = let(ev, "rng_draw", load0(ev, ev->rng.ctr), at);
        store0(ev, ev->rng.ctr, bin(ev, TILEC_BIN_ADD, n, u64(ev, 1)), at);
    }
    return v_expr(ev, philox(ev, n, load0(ev, ev->rng.seed), load0(ev, ev->rng.seq), at));
}

int rng_parallel_begin(ev_t *ev, tilec_ir_var_t *const *vars, tilec_ir_expr_t *const *ext, int n)
{
    tilec_ir_expr_t *lin = NULL, *tot = NULL;
    int i;
    if (ev->rng_par.active || ev->rng.k != ev->k || !ev->rng.ctr) return 0;
    for (i = 0; i < n; i++) {
        tilec_ir_expr_t *v = ex_cast(ev, ev_chk(ev, tilec_ir_varref(ev->a, vars[i])), TILEC_UINT64);
        tilec_ir_expr_t *e = ex_cast(ev, ext[i], TILEC_UINT64);
        lin = lin ? bin(ev, TILEC_BIN_ADD, bin(ev, TILEC_BIN_MUL, lin, e), v) : v;
        tot = tot ? bin(ev, TILEC_BIN_MUL, tot, e) : e;
    }
    ev->rng_par.active = 1;
    ev->rng_par.loop_depth = ev->in_rt_loop;
    ev->rng_par.lin = lin;
    ev->rng_par.total = tot;
    ev->rng_par.per = NULL;
    ev->rng_par.draws = 0;
    return 1;
}

void rng_parallel_end(ev_t *ev, ast_loc_t loc)
{
    if (!ev->rng_par.active) return;
    ev->rng_par.active = 0;
    if (!ev->rng_par.draws) return;
    ev->rng_par.per->u.i = ev->rng_par.draws;
    store0(ev, ev->rng.ctr,
           bin(ev, TILEC_BIN_ADD, load0(ev, ev->rng.ctr), bin(ev, TILEC_BIN_MUL, ev->rng_par.total, u64(ev, ev->rng_par.draws))),
           loc);
}
