/*
 * simt_regs.c — register fragments in the SIMT kit: a fragment with a REGS
 * layout (lower_layout.c) is an array of nlocal registers in every thread,
 * and only the thread holding an element touches it.
 *
 * The layout maps an element (and replica) to (thread, register).  The kit
 * needs the inverse: which element each register of this thread holds.
 * simt_regmap_build enumerates the map once at generation time and looks
 * for a closed form: coordinate D of register l of thread t is
 * F_D(t) + G_D(l), F_D a sum of mixed-radix digits of t ((t / a) % b) * c
 * and G_D a constant per register.  Every layout the passes write (MMA and
 * SIMT accumulators, rows over subgroups, replicated row vectors) has one;
 * the form is checked against the enumeration for every (thread, register)
 * before it is used.  Code over a fragment is then unrolled over the
 * registers, so each register index is a constant (a register, not a
 * private-memory array, on a GPU) and each element's coordinates are
 * F_D(tid), computed once per kernel, plus a constant.  A layout without
 * such a form is still printed right: each thread walks the elements and
 * evaluates the layout (slow, with run-time register indices).
 *
 * On top of that: T.Parallel nests marked lower.dist = "regs" (each thread
 * runs the iterations of the elements it holds), fills, copies to and from
 * other memory and between row vectors, T.gemm on the plain cores
 * (lower.mma = "simt": a register-blocked tile of multiply-adds, the
 * operand rows and columns loaded once per k for all of a thread's
 * registers) and row reductions inside a thread (lower.reduce = "thread").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/ir_walk.h"
#include "simt_internal.h"

/* ---- the map ------------------------------------------------------------------------- */

/* coordinate D of element-and-replica e (e = flat * R + r) */
static int64_t coord_of(const simt_regmap_t *m, int64_t e, int D)
{
    if (D == m->nd - 1)
        return e % m->R;
    int64_t q = e / m->R;
    for (int d = m->nd - 2; d > D; d--)
        q /= m->ext[d];
    return q % m->ext[D];
}

static int64_t f_eval(const simt_regmap_t *m, int D, int64_t t)
{
    int64_t v = 0;
    for (int k = 0; k < m->nterms[D]; k++) {
        const simt_term_t *x = &m->term[D][k];
        int64_t q = t / x->a;
        if (x->b)
            q %= x->b;
        v += q * x->c;
    }
    return v;
}

/* F_D as mixed-radix digits of t, greedily from the lowest: a digit
 * starting at stride a either does not move coordinate D (skip to the
 * next t that does) or moves it by c per step for as many steps as the
 * values follow.  Threads holding nothing (known 0) do not constrain it. */
static int fit_terms(simt_regmap_t *m, int D, const int64_t *F, const unsigned char *known)
{
    int64_t T = m->T, a = 1;
    int nd = m->nd, n = 0;
    while (a < T) {
        if (!known[a])
            return -1;
        int64_t c0 = F[a * nd + D], j = 2;
        if (c0 == 0) {
            while (j * a < T && (!known[j * a] || F[j * a * nd + D] == 0))
                j++;
            a *= j;
            continue;
        }
        while (j * a < T && (!known[j * a] || F[j * a * nd + D] == j * c0))
            j++;
        if (n >= SIMT_MAX_TERMS)
            return -1;
        m->term[D][n].a = a;
        m->term[D][n].b = j * a >= T ? 0 : j;
        m->term[D][n].c = c0;
        n++;
        a *= j;
    }
    m->nterms[D] = n;
    return 0;
}

static int try_fit(simt_regmap_t *m)
{
    int T = m->T, L = m->L, nd = m->nd;
    for (int l = 0; l < L; l++) {
        if (m->inv[l] < 0)
            return 0; /* thread 0 must hold every register */
        for (int D = 0; D < nd; D++)
            m->g[l * nd + D] = coord_of(m, m->inv[l], D);
    }
    int64_t *F = calloc((size_t)T * (size_t)nd, sizeof *F);
    unsigned char *known = calloc((size_t)T, 1);
    int ok = F && known;
    for (int t = 0; t < T && ok; t++)
        for (int l = 0; l < L && ok; l++) {
            int64_t e = m->inv[(int64_t)t * L + l];
            if (e < 0)
                continue;
            for (int D = 0; D < nd; D++) {
                int64_t f = coord_of(m, e, D) - m->g[l * nd + D];
                if (!known[t])
                    F[t * nd + D] = f;
                else if (F[t * nd + D] != f)
                    ok = 0; /* not separable */
            }
            known[t] = 1;
        }
    for (int D = 0; D < nd && ok; D++)
        ok = fit_terms(m, D, F, known) == 0;
    free(F);
    free(known);
    if (!ok)
        return 0;
    for (int D = 0; D < nd; D++) {
        m->fmax[D] = 0;
        for (int t = 0; t < T; t++) {
            int64_t v = f_eval(m, D, t);
            if (v > m->fmax[D])
                m->fmax[D] = v;
        }
    }
    /* the closed form must name exactly the elements each thread holds */
    for (int t = 0; t < T; t++)
        for (int l = 0; l < L; l++) {
            int64_t e = m->inv[(int64_t)t * L + l];
            int in = 1, same = 1;
            for (int D = 0; D < nd; D++) {
                int64_t v = f_eval(m, D, t) + m->g[l * nd + D];
                if (v < 0 || v >= m->ext[D])
                    in = 0;
                else if (e >= 0 && v != coord_of(m, e, D))
                    same = 0;
            }
            if (e >= 0 ? !(in && same) : in)
                return 0;
        }
    return 1;
}

typedef struct mbind {
    const int64_t *idx;
    int ndim;
    int64_t r;
} mbind_t;

simt_regmap_t *simt_regmap_build(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b)
{
    const tilec_ir_layout_t *lay = b->layout;
    const char *nm = b->name ? b->name : "?";
    if (!lay->thread || !lay->local || lay->threads < 1 || lay->nlocal < 1 || lay->replicate < 1 ||
        lay->threads > c->nthreads || lay->ndim != b->ndim) {
        tilec_simt_fail(c, "fragment '%s': a bad register layout", nm);
        return NULL;
    }
    simt_regmap_t *m = tilec_arena_alloc(&c->ar, sizeof *m);
    if (!m) {
        tilec_simt_fail(c, "out of memory");
        return NULL;
    }
    memset(m, 0, sizeof *m);
    m->buf = b;
    m->T = lay->threads;
    m->L = lay->nlocal;
    m->R = lay->replicate;
    m->nd = b->ndim + 1;
    int64_t n = 1;
    for (int d = 0; d < b->ndim; d++) {
        if (!tilec_ir_is_const_int(b->shape[d], &m->ext[d]) || m->ext[d] < 1 || n > (1 << 20) / m->ext[d]) {
            tilec_simt_fail(c, "fragment '%s': registers need a constant shape of at most 2^20 elements", nm);
            return NULL;
        }
        n *= m->ext[d];
    }
    m->ext[b->ndim] = m->R;
    if (n > (1 << 20) / m->R || (int64_t)m->T * m->L > (1 << 22)) {
        tilec_simt_fail(c, "fragment '%s': its register layout is too large", nm);
        return NULL;
    }
    m->n = n * m->R;
    m->inv = tilec_arena_alloc(&c->ar, sizeof *m->inv * (size_t)(m->T * m->L));
    m->fwd = tilec_arena_alloc(&c->ar, sizeof *m->fwd * (size_t)m->n);
    m->g = tilec_arena_alloc(&c->ar, sizeof *m->g * (size_t)(m->L * m->nd));
    if (!m->inv || !m->fwd || !m->g) {
        tilec_simt_fail(c, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < (int64_t)m->T * m->L; i++)
        m->inv[i] = -1;
    int64_t idx[TILEC_IR_MAX_DIMS];
    m->local_r_free = 1;
    for (int64_t e = 0; e < m->n; e++) {
        int64_t r = e % m->R, q = e / m->R, t, l;
        for (int d = b->ndim - 1; d >= 0; d--) {
            idx[d] = q % m->ext[d];
            q /= m->ext[d];
        }
        if (simt_layout_eval(lay->thread, idx, b->ndim, r, &t) != 0 ||
            simt_layout_eval(lay->local, idx, b->ndim, r, &l) != 0 || t < 0 || t >= m->T || l < 0 || l >= m->L ||
            m->inv[t * m->L + l] != -1) {
            tilec_simt_fail(c, "fragment '%s': its register layout is not one to one onto %d threads x %d registers",
                            nm, m->T, m->L);
            return NULL;
        }
        m->inv[t * m->L + l] = (int32_t)e;
        m->fwd[e] = (int32_t)(t * m->L + l);
        if (r > 0 && m->fwd[e] % m->L != m->fwd[e - 1] % m->L)
            m->local_r_free = 0;
    }
    m->all_valid = 1;
    for (int64_t i = 0; i < (int64_t)m->T * m->L; i++)
        if (m->inv[i] < 0)
            m->all_valid = 0;
    m->fitted = try_fit(m);
    /* registers as scalars: they stay in registers whatever a compiler
     * does with private arrays (16-bit floats keep an array: their FUNCS
     * mode goes through pointers) */
    m->scalar = !simt_is_half(b->dtype);
    return m;
}

const char *simt_regs_ref(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off, const char *store)
{
    const simt_regmap_t *m = c->bi[b->id].rm;
    if (!m || !m->scalar)
        return NULL;
    char *end = NULL;
    long v = strtol(off, &end, 10);
    if (end && end != off && *end == '\0') {
        if (v < 0 || v >= m->L) {
            tilec_simt_fail(c, "register %ld of '%s' out of range", v, b->name ? b->name : "?");
            return "0";
        }
        return store ? simt_fmt(c, "b%d_%ld = %s;", b->id, v, store) : simt_fmt(c, "b%d_%ld", b->id, v);
    }
    /* a run-time register index: select among the scalars */
    const char *r = NULL;
    if (store) {
        r = simt_fmt(c, "switch (%s) {", off);
        for (int l = 0; l < m->L; l++)
            r = simt_fmt(c, "%s case %d: b%d_%d = %s; break;", r, l, b->id, l, store);
        return simt_fmt(c, "%s default: break; }", r);
    }
    r = simt_fmt(c, "b%d_%d", b->id, m->L - 1);
    for (int l = m->L - 2; l >= 0; l--)
        r = simt_fmt(c, "((%s) == %d ? b%d_%d : %s)", off, l, b->id, l, r);
    return simt_fmt(c, "(%s)", r);
}

/* ---- code over the registers of one thread ------------------------------------------------ */

static const char *f_str(tilec_simt_ctx_t *c, const simt_regmap_t *m, int D)
{
    const char *s = NULL;
    for (int k = 0; k < m->nterms[D]; k++) {
        const simt_term_t *x = &m->term[D][k];
        const char *t = x->a == 1 ? "tc_tid" : simt_fmt(c, "(tc_tid / %" PRId64 ")", x->a);
        if (x->b)
            t = simt_fmt(c, "(%s %% %" PRId64 ")", t, x->b);
        if (x->c != 1)
            t = simt_fmt(c, "%s * %" PRId64, t, x->c);
        s = s ? simt_fmt(c, "%s + %s", s, t) : t;
    }
    return s ? s : "0";
}

void simt_regs_decls(tilec_simt_ctx_t *c)
{
    for (int i = c->k->nparams; i < c->k->nbufs; i++) {
        const simt_regmap_t *m = c->bi[i].rm;
        if (c->bi[i].place != SIMT_P_REGS || !m->fitted)
            continue;
        for (int D = 0; D < m->nd; D++)
            if (m->nterms[D])
                tilec_simt_emit(c, "const int tc_f%d_%d = %s;%s /* %s: coordinate %d of my registers */", i, D,
                                f_str(c, m, D), c->dl.bool_type ? "" : simt_fmt(c, " (void)tc_f%d_%d;", i, D),
                                m->buf->name ? m->buf->name : "", D);
    }
}

typedef struct slot {
    const char *coord[TILEC_IR_MAX_DIMS + 1];
    const char *slot;
    int closes;
} slot_t;

static int nslots(const simt_regmap_t *m) { return m->fitted ? m->L : 1; }

/* The coordinates of register l of fitted map m in this thread (into
 * coord[m->nd]) and the condition under which the thread holds it (NULL:
 * every thread does): try_fit checked that a thread holds a register
 * exactly when the closed form's coordinates lie inside the shape. */
static const char *slot_coords(tilec_simt_ctx_t *c, const simt_regmap_t *m, int l, const char **coord)
{
    int id = m->buf->id;
    const char *guard = m->T < c->nthreads ? simt_fmt(c, "tc_tid < %d", m->T) : NULL;
    for (int D = 0; D < m->nd; D++) {
        int64_t g = m->g[l * m->nd + D];
        if (!m->nterms[D])
            coord[D] = simt_fmt(c, "%" PRId64, g);
        else
            coord[D] = g ? simt_fmt(c, "(tc_f%d_%d + %" PRId64 ")", id, D, g) : simt_fmt(c, "tc_f%d_%d", id, D);
        if (m->nterms[D] && m->fmax[D] + g >= m->ext[D]) {
            const char *x = simt_fmt(c, "%s < %" PRId64, coord[D], m->ext[D]);
            guard = guard ? simt_fmt(c, "%s && %s", guard, x) : x;
        }
    }
    return guard;
}

/* Opens the code of register l of map m in this thread (for a map without
 * closed form, l is 0 and the code loops over the elements the thread
 * holds): sl gets the element's coordinates and the register index. */
static void slot_open(tilec_simt_ctx_t *c, const simt_regmap_t *m, int l, slot_t *sl)
{
    const char *nm = m->buf->name ? m->buf->name : "";
    if (m->fitted) {
        const char *guard = slot_coords(c, m, l, sl->coord);
        sl->slot = simt_fmt(c, "%d", l);
        if (guard)
            tilec_simt_emit(c, "if (%s) { /* %s register %d */", guard, nm, l);
        else
            tilec_simt_emit(c, "{ /* %s register %d */", nm, l);
        c->ind++;
        sl->closes = 1;
        return;
    }
    int t = tilec_simt_tmp(c);
    tilec_simt_emit(c, "for (int tc_e%d = 0; tc_e%d < %" PRId64 "; tc_e%d++) { /* the elements of %s I hold */", t, t,
                    m->n, t, nm);
    c->ind++;
    const char *idx[TILEC_IR_MAX_DIMS];
    int64_t stride = m->R;
    for (int d = m->nd - 2; d >= 0; d--) {
        idx[d] = simt_fmt(c, "tc_x%d_%d", t, d);
        tilec_simt_emit(c, "const int %s = (tc_e%d / %" PRId64 ") %% %" PRId64 ";", idx[d], t, stride, m->ext[d]);
        stride *= m->ext[d];
        sl->coord[d] = idx[d];
    }
    const char *r = simt_fmt(c, "(tc_e%d %% %d)", t, m->R);
    sl->coord[m->nd - 1] = r;
    const tilec_ir_layout_t *lay = m->buf->layout;
    tilec_simt_emit(c, "if (%s == tc_tid) {", simt_layout_str(c, lay->thread, idx, m->nd - 1, r));
    c->ind++;
    tilec_simt_emit(c, "const int tc_l%d = %s;", t, simt_layout_str(c, lay->local, idx, m->nd - 1, r));
    sl->slot = simt_fmt(c, "tc_l%d", t);
    sl->closes = 2;
}

static void slot_close(tilec_simt_ctx_t *c, const slot_t *sl)
{
    for (int i = 0; i < sl->closes; i++)
        simt_close_block(c);
}

/* The register of map bm that holds, in the thread running register
 * `slot` of map rm, the element whose coordinate d is rm's coordinate
 * sel[d]: a constant over the threads, else -1 (*unowned: some thread
 * does not hold it). */
static int const_slot(const simt_regmap_t *rm, int slot, const simt_regmap_t *bm, const int *sel, int *unowned)
{
    int found = -1;
    for (int t = 0; t < rm->T; t++) {
        int64_t e = rm->inv[(int64_t)t * rm->L + slot];
        if (e < 0)
            continue;
        int64_t flat = 0;
        for (int d = 0; d < bm->nd - 1; d++) {
            int64_t x = coord_of(rm, e, sel[d]);
            if (x >= bm->ext[d]) {
                *unowned = 1;
                return -1;
            }
            flat = flat * bm->ext[d] + x;
        }
        int l2 = -1;
        for (int r = 0; r < bm->R; r++) {
            int32_t tl = bm->fwd[flat * bm->R + r];
            if (tl / bm->L == t) {
                l2 = tl % bm->L;
                break;
            }
        }
        if (l2 < 0) {
            *unowned = 1;
            return -1;
        }
        if (found < 0)
            found = l2;
        else if (found != l2)
            return -1;
    }
    return found;
}

static const char *dyn_local(tilec_simt_ctx_t *c, const simt_regmap_t *bm, const char *const *idx)
{
    if (!bm->local_r_free) {
        tilec_simt_fail(c, "fragment '%s': a register index that depends on the replica is not supported",
                        bm->buf->name ? bm->buf->name : "?");
        return "0";
    }
    return simt_fmt(c, "(%s)", simt_layout_str(c, bm->buf->layout->local, idx, bm->nd - 1, "0"));
}

const char *simt_regs_offset(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    const simt_regmap_t *bm = c->bi[b->id].rm;
    const simt_regnest_t *rn = &c->rn;
    const char *nm = b->name ? b->name : "?";
    if (!rn->rm) {
        tilec_simt_fail(c, "register fragment '%s' is accessed outside the code of the threads holding it", nm);
        return "0";
    }
    int sel[TILEC_IR_MAX_DIMS], all = 1, ident = bm == rn->rm;
    for (int d = 0; d < b->ndim; d++) {
        sel[d] = -1;
        if (idx[d] && idx[d]->kind == TILEC_EX_VAR)
            for (int k = 0; k < rn->nv; k++)
                if (idx[d]->u.var == rn->var[k])
                    sel[d] = k;
        if (sel[d] < 0)
            all = 0;
        if (sel[d] != d)
            ident = 0;
    }
    if (all && ident)
        return rn->slot_s;
    if (all && rn->slot >= 0) {
        int un = 0, l2 = const_slot(rn->rm, rn->slot, bm, sel, &un);
        if (un) {
            tilec_simt_fail(c, "register fragment '%s': an element is read by a thread that does not hold it", nm);
            return "0";
        }
        if (l2 >= 0)
            return simt_fmt(c, "%d", l2);
    }
    const char *is[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < b->ndim; d++)
        is[d] = tilec_simt_expr(c, idx[d]);
    return dyn_local(c, bm, is);
}

/* ---- T.Parallel nests run by the owners ------------------------------------------------------- */

typedef struct findref {
    tilec_simt_ctx_t *c;
    const tilec_ir_var_t *v[2];
    int nv;
    const tilec_ir_buffer_t *ref;
} findref_t;

static void ref_try(findref_t *f, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    if (f->ref || !b || simt_place(f->c, b) != SIMT_P_REGS || b->ndim != f->nv || !idx)
        return;
    for (int d = 0; d < b->ndim; d++)
        if (!idx[d] || idx[d]->kind != TILEC_EX_VAR || idx[d]->u.var != f->v[d])
            return;
    f->ref = b;
}

static int ref_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    if (e->kind == TILEC_EX_LOAD)
        ref_try(w->user, e->u.load.buf, e->u.load.idx);
    return TILEC_WALK_CONTINUE;
}

static int ref_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    if (s->kind == TILEC_ST_STORE)
        ref_try(w->user, s->u.store.buf, s->u.store.idx);
    return TILEC_WALK_CONTINUE;
}

/* The one store of a register nest's body (`store T[...] = v`, or that
 * store alone under an `if` without else, *cond), when the registers'
 * elements of two neighbouring slots may be stored by one vector of 2:
 * T global, of a storage type the dialect's vector templates move. */
static const tilec_ir_stmt_t *pair_body(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *body, const tilec_ir_expr_t **cond)
{
    const tilec_simt_dialect_t *d = &c->dl;
    *cond = NULL;
    if (!body || body->next)
        return NULL;
    if (body->kind == TILEC_ST_IF && !body->u.cond.els) {
        *cond = body->u.cond.cond;
        body = body->u.cond.then;
        if (!body || body->next)
            return NULL;
    }
    if (body->kind != TILEC_ST_STORE || !body->u.store.buf || !body->u.store.value || !body->u.store.idx)
        return NULL;
    const tilec_ir_buffer_t *b = body->u.store.buf;
    if (d->vec_width < 2 || !d->vec_load || !d->vec_store || simt_place(c, b) != SIMT_P_GLOBAL ||
        b->dtype == TILEC_BOOL || tilec_dtype_size(b->dtype) * 2 > d->shared_align || b->ndim < 1 ||
        (b->dtype == TILEC_FLOAT16 && d->f16.mode == TILEC_SIMT_HALF_FUNCS) ||
        (b->dtype == TILEC_BFLOAT16 && d->bf16.mode == TILEC_SIMT_HALF_FUNCS))
        return NULL;
    return body;
}

/* Registers l and l + 1 of fitted map m (held by every thread) in one
 * vector store of 2 elements (st, from pair_body) where at run time both
 * stores happen, the second element is the one after the first and the
 * first's offset is even; else the two stores as written.  Each slot's
 * condition, offset and value are computed with its own coordinates (in
 * blocks of their own: the loop variables' names are the same) into
 * temporaries first.  The epilogue of a GEMM through a re-viewed tensor
 * (conv2d's `out`): 64 2-byte stores a thread become 32 4-byte ones. */
static int pair_store(tilec_simt_ctx_t *c, const simt_regmap_t *m, const findref_t *f, const tilec_ir_stmt_t *st,
                      const tilec_ir_expr_t *cond, int l)
{
    int nd = m->nd, last = nd - 2;
    if (!m->fitted || m->R != 1 || m->T != c->nthreads || f->nv != 2 || last != 1 || l + 1 >= m->L)
        return 0;
    for (int D = 0; D < nd; D++)
        if (m->g[(l + 1) * nd + D] != m->g[l * nd + D] + (D == last ? 1 : 0))
            return 0;
    const char *co[2][TILEC_IR_MAX_DIMS + 1];
    if (slot_coords(c, m, l, co[0]) || slot_coords(c, m, l + 1, co[1]))
        return 0; /* a thread may not hold one of them */
    const tilec_ir_buffer_t *b = st->u.store.buf;
    tilec_dtype_t vt;
    simt_store_operand(st->u.store.value, b->dtype, &vt);
    const char *it = simt_idx_type(c, b), *bt = c->dl.type_name[TILEC_INT32], *vty = tilec_simt_ctype(c, vt);
    const char *nm = tilec_simt_buf_name(c, b), *sty = simt_st_type(c, b), *q = c->dl.global_qual;
    int t = tilec_simt_tmp(c);
    tilec_simt_emit(c, "{ /* %s registers %d, %d: one vector of 2 where both are stored */",
                    m->buf->name ? m->buf->name : "", l, l + 1);
    c->ind++;
    tilec_simt_emit(c, "%s tc_p%d_0, tc_p%d_1; %s tc_o%d_0, tc_o%d_1; %s tc_y%d_0, tc_y%d_1;", bt, t, t, it, t, t, vty, t,
                    t);
    for (int j = 0; j < 2; j++) {
        tilec_simt_emit(c, "{");
        c->ind++;
        for (int i = 0; i < f->nv; i++)
            tilec_simt_emit(c, "const int v%d = %s; /* %s */", f->v[i]->id, co[j][i], f->v[i]->name ? f->v[i]->name : "");
        c->rn.rm = m;
        c->rn.nv = f->nv;
        c->rn.var[0] = f->v[0];
        c->rn.var[1] = f->v[1];
        c->rn.slot = l + j;
        c->rn.slot_s = simt_fmt(c, "%d", l + j);
        const char *v = simt_store_value(c, st->u.store.value, b->dtype);
        if (cond)
            tilec_simt_emit(c, "tc_p%d_%d = (%s) ? 1 : 0;", t, j, tilec_simt_expr(c, (tilec_ir_expr_t *)cond));
        else
            tilec_simt_emit(c, "tc_p%d_%d = 1;", t, j);
        tilec_simt_emit(c, "tc_o%d_%d = %s;", t, j, tilec_simt_offset(c, b, st->u.store.idx));
        tilec_simt_emit(c, "tc_y%d_%d = %s;", t, j, v);
        memset(&c->rn, 0, sizeof c->rn);
        simt_close_block(c);
    }
    const char *p0 = simt_fmt(c, "tc_p%d_0", t), *p1 = simt_fmt(c, "tc_p%d_1", t);
    const char *o0 = simt_fmt(c, "tc_o%d_0", t), *o1 = simt_fmt(c, "tc_o%d_1", t);
    const char *y0 = simt_fmt(c, "tc_y%d_0", t), *y1 = simt_fmt(c, "tc_y%d_1", t);
    tilec_simt_emit(c, "if (%s && %s && %s == %s + 1 && (%s) %% 2 == 0) {", simt_cond(c, p0), simt_cond(c, p1), o1, o0, o0);
    c->ind++;
    tilec_simt_emit(c, "%s%s%s *const tc_vp = %s + %s;", q, *q ? " " : "", sty, nm, o0);
    tilec_simt_emit(c, "%s%s%s %s[2] __attribute__((aligned(%zu)));", c->dl.private_qual, *c->dl.private_qual ? " " : "",
                    sty, nm, 2 * tilec_dtype_size(b->dtype));
    tilec_simt_emit(c, "%s", tilec_simt_store(c, b, "0", y0));
    tilec_simt_emit(c, "%s", tilec_simt_store(c, b, "1", y1));
    const char *sk[] = {"n", "t", "p", "v"};
    const char *lk[] = {"n", "t", "p"}, *lv[] = {"2", sty, nm};
    const char *sv[] = {"2", sty, "tc_vp", simt_subst(c, c->dl.vec_load, 3, lk, lv)};
    tilec_simt_emit(c, "%s", simt_subst(c, c->dl.vec_store, 4, sk, sv));
    c->ind--;
    tilec_simt_emit(c, "} else {");
    c->ind++;
    tilec_simt_emit(c, "if (%s) { %s }", simt_cond(c, p0), tilec_simt_store(c, b, o0, y0));
    tilec_simt_emit(c, "if (%s) { %s }", simt_cond(c, p1), tilec_simt_store(c, b, o1, y1));
    simt_close_block(c);
    simt_close_block(c);
    return 1;
}

static void gen_nest(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    findref_t f;
    memset(&f, 0, sizeof f);
    f.c = c;
    const tilec_ir_stmt_t *lv[2] = {s, NULL};
    f.nv = 1;
    const tilec_ir_stmt_t *in = s->u.loop.body;
    if (in && !in->next && in->kind == TILEC_ST_FOR && in->u.loop.kind == TILEC_LOOP_PARALLEL)
        lv[f.nv++] = in;
    for (int i = 0; i < f.nv; i++)
        f.v[i] = lv[i]->u.loop.var;
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = ref_stmt;
    w.expr_pre = ref_expr;
    w.user = &f;
    tilec_ir_stmt_t *body = lv[f.nv - 1]->u.loop.body;
    if (tilec_ir_walk_block(&w, &body) < 0 || !f.ref) {
        tilec_simt_fail(c, "a T.Parallel nest marked lower.dist = \"regs\" indexes no register fragment by its loop "
                           "variables");
        return;
    }
    const simt_regmap_t *m = c->bi[f.ref->id].rm;
    for (int i = 0; i < f.nv; i++) {
        int64_t e;
        if (!tilec_ir_is_const_int(lv[i]->u.loop.extent, &e) || e != m->ext[i]) {
            tilec_simt_fail(c, "a register nest over '%s' does not run over its shape", f.ref->name);
            return;
        }
    }
    tilec_simt_emit(c, "{ /* parallel over the registers of %s */", f.ref->name ? f.ref->name : "");
    c->ind++;
    int saved = c->per_thread;
    c->per_thread = 1;
    const tilec_ir_expr_t *pcond;
    const tilec_ir_stmt_t *pst = pair_body(c, body, &pcond);
    for (int l = 0; l < nslots(m) && !c->failed; l++) {
        if (pst && pair_store(c, m, &f, pst, pcond, l)) {
            l++;
            continue;
        }
        slot_t sl;
        slot_open(c, m, l, &sl);
        for (int i = 0; i < f.nv; i++)
            tilec_simt_emit(c, "const int v%d = %s; /* %s */", f.v[i]->id, sl.coord[i], f.v[i]->name ? f.v[i]->name : "");
        c->rn.rm = m;
        c->rn.nv = f.nv;
        c->rn.var[0] = f.v[0];
        c->rn.var[1] = f.v[1];
        c->rn.slot = m->fitted ? l : -1;
        c->rn.slot_s = sl.slot;
        simt_gen_stmts(c, body);
        memset(&c->rn, 0, sizeof c->rn);
        slot_close(c, &sl);
    }
    c->per_thread = saved;
    simt_close_block(c);
}

/* ---- tile operations ------------------------------------------------------------------------------ */

static const simt_regmap_t *rmap(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b)
{
    return simt_place(c, b) == SIMT_P_REGS ? c->bi[b->id].rm : NULL;
}

static int whole(const tilec_ir_region_t *r)
{
    for (int d = 0; d < r->buf->ndim; d++) {
        int64_t b, e;
        if (!tilec_ir_is_const_int(r->base[d], &b) || b != 0 || !tilec_ir_is_const_int(r->buf->shape[d], &e) ||
            e != r->extent[d])
            return 0;
    }
    return 1;
}

static void gen_fill(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const simt_regmap_t *m)
{
    const tilec_ir_buffer_t *b = s->u.fill.dst.buf;
    if (!whole(&s->u.fill.dst)) {
        tilec_simt_fail(c, "a fill of part of register fragment '%s'", b->name);
        return;
    }
    tilec_simt_emit(c, "{ /* fill %s (registers) */", b->name ? b->name : "");
    c->ind++;
    tilec_simt_emit(c, "const %s tc_v = %s;", tilec_simt_ctype(c, b->dtype),
                    tilec_simt_convert(c, tilec_simt_expr(c, s->u.fill.value), s->u.fill.value->dtype, b->dtype));
    for (int l = 0; l < m->L; l++)
        tilec_simt_emit(c, "%s", tilec_simt_store(c, b, simt_fmt(c, "%d", l), "tc_v"));
    simt_close_block(c);
}

/* Indices in region r of the element whose coordinates in fragment m
 * are co[] (element k of one region is element k of the other). */
static void region_at(tilec_simt_ctx_t *c, const tilec_ir_region_t *r, int t, const simt_regmap_t *m,
                      const char *const *co, const char **idx)
{
    const char *it = simt_idx_type(c, r->buf);
    /* the non-unit extents of both sides, in order */
    int64_t re[TILEC_IR_MAX_DIMS], me[TILEC_IR_MAX_DIMS];
    int nr = 0, nm = 0, same;
    for (int d = 0; d < r->buf->ndim; d++)
        if (r->extent[d] != 1)
            re[nr++] = r->extent[d];
    for (int d = 0; d < m->nd - 1; d++)
        if (m->ext[d] != 1)
            me[nm++] = m->ext[d];
    same = nr == nm && !memcmp(re, me, sizeof re[0] * (size_t)nr);
    if (same) {
        int k = 0;
        for (int d = 0; d < m->nd - 1 && k < nm; d++)
            if (m->ext[d] != 1)
                me[k++] = d; /* now: the fragment dimension of each non-unit extent */
        k = 0;
        for (int d = 0; d < r->buf->ndim; d++)
            idx[d] = r->extent[d] == 1 ? simt_fmt(c, "tc_r%d_%d", t, d)
                                       : simt_fmt(c, "(tc_r%d_%d + %s)", t, d, simt_cast(c, "(%s)%s", it, co[me[k++]]));
        return;
    }
    const char *flat = "0";
    for (int d = 0; d < m->nd - 1; d++)
        flat = simt_fmt(c, "(%s * %" PRId64 " + %s)", flat, m->ext[d], co[d]);
    int64_t stride = 1;
    for (int d = r->buf->ndim - 1; d >= 0; d--) {
        idx[d] = simt_fmt(c, "(tc_r%d_%d + %s)", t, d,
                          simt_cast(c, "(%s)(%s)", it,
                                    simt_fmt(c, "(%s / %" PRId64 ") %% %" PRId64, flat, stride, r->extent[d])));
        stride *= r->extent[d];
    }
}

/* The registers l, l+1, ... of map m that one vector access of the
 * other side ro can move: they hold consecutive elements of the last
 * dimension, starting at a multiple of the run in every thread, with no
 * guard; ro is a global or dense shared buffer whose last dimension is
 * the fragment's.  The run (a power of two, at most the dialect's vector
 * width and shared_align bytes), or 1.  A map over fewer threads than the
 * block's (warp specialization's producer holds none) is fine: the access
 * stands inside the register's thread guard (slot_open). */
static int vec_run(tilec_simt_ctx_t *c, const simt_regmap_t *m, int l, const tilec_ir_region_t *ro)
{
    const tilec_simt_dialect_t *d = &c->dl;
    const tilec_ir_buffer_t *b = ro->buf;
    int nd = m->nd, last = nd - 2, lr = b->ndim - 1, p = simt_place(c, b);
    if (d->vec_width < 2 || !d->vec_load || !d->vec_store || !m->fitted || m->R != 1 || m->T > c->nthreads ||
        b->dtype == TILEC_BOOL || (p != SIMT_P_GLOBAL && !(p == SIMT_P_SHARED && c->bi[b->id].dense)) || lr < 0 ||
        ro->extent[lr] != m->ext[last] || m->ext[last] == 1)
        return 1;
    if ((b->dtype == TILEC_FLOAT16 && d->f16.mode == TILEC_SIMT_HALF_FUNCS) ||
        (b->dtype == TILEC_BFLOAT16 && d->bf16.mode == TILEC_SIMT_HALF_FUNCS))
        return 1; /* its loads take a global pointer */
    size_t esz = tilec_dtype_size(b->dtype);
    int w = 1;
    while (w * 2 <= (int)d->vec_width && w * 2 <= 16 && (size_t)(w * 2) * esz <= d->shared_align)
        w *= 2;
    for (; w > 1; w /= 2) {
        int ok = l + w <= m->L && m->g[l * nd + last] % w == 0;
        for (int k = 0; ok && k < m->nterms[last]; k++)
            ok = m->term[last][k].c % w == 0;
        for (int D = 0; ok && D < nd - 1; D++)
            ok = !m->nterms[D] || m->fmax[D] + m->g[l * nd + D] + (D == last ? w - 1 : 0) < m->ext[D];
        for (int j = 1; ok && j < w; j++)
            for (int D = 0; ok && D < nd; D++)
                ok = m->g[(l + j) * nd + D] == m->g[l * nd + D] + (D == last ? j : 0);
        if (ok)
            return w;
    }
    return 1;
}

/* One vector access of the w elements of registers l.. of fragment m in
 * region ro of copy s (bases tc_r<t>_*), when at run time the run lies
 * inside ro's buffer and its offset is a multiple of w; else the scalar
 * copies of the registers.  The vector moves through a private array
 * named like ro's buffer in an inner block, so that the kit's own loads
 * and stores of that buffer convert each element. */
static void copy_reg(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const simt_regmap_t *m, int l,
                     const tilec_ir_region_t *ro, int t);

static void vec_copy(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const simt_regmap_t *m, int l, int w,
                     const tilec_ir_region_t *ro, int t)
{
    const tilec_ir_buffer_t *b = ro->buf, *fb = m->buf;
    int to_regs = s->u.copy.dst.buf == fb;
    slot_t sl;
    slot_open(c, m, l, &sl);
    const char *idx[TILEC_IR_MAX_DIMS], *idx2[TILEC_IR_MAX_DIMS];
    region_at(c, ro, t, m, sl.coord, idx);
    int lr = b->ndim - 1, glob = b->scope == TILEC_SCOPE_GLOBAL;
    for (int d = 0; d <= lr; d++)
        idx2[d] = d == lr ? simt_fmt(c, "(%s + %d)", idx[d], w - 1) : idx[d];
    const char *off = simt_offset_str(c, b, idx), *cond = simt_fmt(c, "(%s) %% %d == 0", off, w);
    if (glob)
        cond = simt_fmt(c, "%s && %s && %s", simt_inside_str(c, b, idx), simt_inside_str(c, b, idx2), cond);
    const char *st = simt_st_type(c, b), *wn = simt_fmt(c, "%d", w), *nm = tilec_simt_buf_name(c, b);
    const char *q = glob ? c->dl.global_qual : c->dl.shared_ptr_qual;
    tilec_simt_emit(c, "if (%s) { /* registers %d..%d: one vector */", cond, l, l + w - 1);
    c->ind++;
    tilec_simt_emit(c, "%s%s%s *const tc_vp = %s + %s;", q, *q ? " " : "", st, nm, off);
    tilec_simt_emit(c, "%s%s%s %s[%d] __attribute__((aligned(%zu)));", c->dl.private_qual, *c->dl.private_qual ? " " : "",
                    st, nm, w, (size_t)w * tilec_dtype_size(b->dtype));
    const char *lk[] = {"n", "t", "p"}, *sk[] = {"n", "t", "p", "v"};
    const char *lv[] = {wn, st, to_regs ? "tc_vp" : nm};
    const char *sv[] = {wn, st, to_regs ? nm : "tc_vp", simt_subst(c, c->dl.vec_load, 3, lk, lv)};
    const char *mv = simt_subst(c, c->dl.vec_store, 4, sk, sv);
    if (to_regs)
        tilec_simt_emit(c, "%s", mv);
    for (int j = 0; j < w; j++) {
        const char *r = simt_fmt(c, "%d", l + j), *e = simt_fmt(c, "%d", j);
        tilec_simt_emit(c, "%s", to_regs ? tilec_simt_store(c, fb, r, simt_store_conv(c, tilec_simt_load(c, b, e), b->dtype, fb->dtype))
                                         : tilec_simt_store(c, b, e, simt_store_conv(c, tilec_simt_load(c, fb, r), fb->dtype, b->dtype)));
    }
    if (!to_regs)
        tilec_simt_emit(c, "%s", mv);
    c->ind--;
    tilec_simt_emit(c, "} else {");
    c->ind++;
    for (int j = 0; j < w; j++)
        copy_reg(c, s, m, l + j, ro, t);
    simt_close_block(c);
    slot_close(c, &sl);
}

static void gen_copy(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const simt_regmap_t *ms, const simt_regmap_t *md)
{
    const tilec_ir_region_t *rs = &s->u.copy.src, *rd = &s->u.copy.dst;
    const tilec_ir_buffer_t *bs = rs->buf, *bd = rd->buf;
    tilec_simt_emit(c, "{ /* copy %s -> %s (registers) */", bs->name ? bs->name : "", bd->name ? bd->name : "");
    c->ind++;
    if (ms && md) { /* whole row vectors: every holder of a destination element */
        if (!whole(rs) || !whole(rd) || ms->nd != md->nd || memcmp(ms->ext, md->ext, sizeof ms->ext[0] * (size_t)(ms->nd - 1))) {
            tilec_simt_fail(c, "a copy between register fragments of different shapes");
            return;
        }
        int sel[TILEC_IR_MAX_DIMS];
        for (int d = 0; d < ms->nd - 1; d++)
            sel[d] = d;
        for (int l = 0; l < nslots(md) && !c->failed; l++) {
            slot_t sl;
            slot_open(c, md, l, &sl);
            int un = 0, l2 = md->fitted ? const_slot(md, l, ms, sel, &un) : -1;
            if (un) {
                tilec_simt_fail(c, "copy %s -> %s: a thread does not hold the element it copies", bs->name, bd->name);
                return;
            }
            const char *src = l2 >= 0 ? simt_fmt(c, "%d", l2) : dyn_local(c, ms, sl.coord);
            tilec_simt_emit(c, "%s", tilec_simt_store(c, bd, sl.slot,
                                                      simt_store_conv(c, tilec_simt_load(c, bs, src), bs->dtype,
                                                                      bd->dtype)));
            slot_close(c, &sl);
        }
        simt_close_block(c);
        return;
    }
    const simt_regmap_t *m = ms ? ms : md;
    const tilec_ir_region_t *ro = ms ? rd : rs; /* the other side */
    int64_t n;
    int t = simt_region_bases(c, ro, &n);
    if (t < 0)
        return;
    if (n != m->n / m->R || !whole(ms ? rs : rd)) {
        tilec_simt_fail(c, "copy %s -> %s: the register side must be the whole fragment", bs->name, bd->name);
        return;
    }
    for (int l = 0; l < nslots(m) && !c->failed; l++) {
        int w = vec_run(c, m, l, ro);
        if (w > 1) {
            vec_copy(c, s, m, l, w, ro, t);
            l += w - 1;
        } else {
            copy_reg(c, s, m, l, ro, t);
        }
    }
    simt_close_block(c);
}

/* The copy of register l of map m (of the fragment side) from or to the
 * other side ro of copy s (bases tc_r<t>_*). */
static void copy_reg(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const simt_regmap_t *m, int l,
                     const tilec_ir_region_t *ro, int t)
{
    const tilec_ir_buffer_t *bs = s->u.copy.src.buf, *bd = s->u.copy.dst.buf;
    int ms = m->buf == bs, glob = ro->buf->scope == TILEC_SCOPE_GLOBAL;
    slot_t sl;
    slot_open(c, m, l, &sl);
    const char *idx[TILEC_IR_MAX_DIMS];
    region_at(c, ro, t, m, sl.coord, idx);
    const char *off = simt_offset_str(c, ro->buf, idx);
    const char *in = glob ? simt_inside_str(c, ro->buf, idx) : NULL;
    if (ms) {
        const char *st = tilec_simt_store(c, bd, off, simt_store_conv(c, tilec_simt_load(c, bs, sl.slot), bs->dtype,
                                                                      bd->dtype));
        /* one holder writes: replica 0 */
        const char *cond = m->R > 1 ? simt_fmt(c, "%s == 0", sl.coord[m->nd - 1]) : NULL;
        if (in)
            cond = cond ? simt_fmt(c, "%s && %s", cond, in) : in;
        if (cond)
            tilec_simt_emit(c, "if (%s) %s", cond, st);
        else
            tilec_simt_emit(c, "%s", st);
    } else {
        const char *ld = tilec_simt_load(c, bs, off);
        if (in)
            ld = simt_fmt(c, "((%s) ? %s : %s)", in, ld, simt_zero(c, bs->dtype));
        tilec_simt_emit(c, "%s", tilec_simt_store(c, bd, sl.slot, simt_store_conv(c, ld, bs->dtype, bd->dtype)));
    }
    slot_close(c, &sl);
}

/* lower.mma = "simt": C in registers; A and B elsewhere */
static void gen_gemm(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const simt_regmap_t *m)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    const tilec_ir_attr_t *mma = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma");
    if (!mma || mma->kind != TILEC_ATTR_STRING || strcmp(mma->s, "simt") != 0) {
        tilec_simt_fail(c, "gemm with MMA instruction '%s' needs the dialect's statement hook",
                        mma && mma->kind == TILEC_ATTR_STRING ? mma->s : "?");
        return;
    }
    int la = simt_gemm_lead(s, 0), lb = simt_gemm_lead(s, 1);
    if (rmap(c, A) || rmap(c, B) || A->ndim - la != 2 || B->ndim - lb != 2 || m->nd != 3 || m->R != 1) {
        tilec_simt_fail(c, "gemm: operands in registers or of rank above 2 are not supported by the SIMT kit");
        return;
    }
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    int64_t M = m->ext[0], N = m->ext[1], K, x;
    if (!tilec_ir_is_const_int(A->shape[la + (ta ? 0 : 1)], &K) || !tilec_ir_is_const_int(A->shape[la + (ta ? 1 : 0)], &x) ||
        x != M || !tilec_ir_is_const_int(B->shape[lb + (tb ? 1 : 0)], &x) || x != K ||
        !tilec_ir_is_const_int(B->shape[lb + (tb ? 0 : 1)], &x) || x != N) {
        tilec_simt_fail(c, "gemm: shapes of '%s', '%s', '%s' do not agree", A->name, B->name, C->name);
        return;
    }
    tilec_dtype_t at = simt_acc_dtype(C->dtype);
    const char *act = tilec_simt_ctype(c, at);
    tilec_simt_emit(c, "{ /* gemm %s, %s -> %s (registers, %d per thread) */", A->name ? A->name : "",
                    B->name ? B->name : "", C->name ? C->name : "", m->L);
    c->ind++;
    if (!m->fitted || !m->all_valid || m->T != c->nthreads) {
        /* each element a thread holds, alone: right for any layout */
        slot_t sl;
        for (int l = 0; l < nslots(m) && !c->failed; l++) {
            slot_open(c, m, l, &sl);
            const char *cv = tilec_simt_load(c, C, sl.slot);
            tilec_simt_emit(c, "%s tc_acc = %s;", act, s->u.gemm.clear_accum ? simt_zero(c, at) : tilec_simt_convert(c, cv, C->dtype, at));
            tilec_simt_emit(c, "for (int tc_k = 0; tc_k < %" PRId64 "; tc_k++)", K);
            const char *ao = ta ? simt_gemm_off(c, s, 0, "tc_k", sl.coord[0]) : simt_gemm_off(c, s, 0, sl.coord[0], "tc_k");
            const char *bo = tb ? simt_gemm_off(c, s, 1, sl.coord[1], "tc_k") : simt_gemm_off(c, s, 1, "tc_k", sl.coord[1]);
            tilec_simt_emit(c, "  tc_acc = %s;",
                            simt_add(c, at, "tc_acc",
                                     simt_fmt(c, "%s * %s", tilec_simt_convert(c, tilec_simt_load(c, A, ao), A->dtype, at),
                                              tilec_simt_convert(c, tilec_simt_load(c, B, bo), B->dtype, at))));
            tilec_simt_emit(c, "%s", tilec_simt_store(c, C, sl.slot, simt_store_conv(c, "tc_acc", at, C->dtype)));
            slot_close(c, &sl);
        }
        simt_close_block(c);
        return;
    }
    /* register-blocked: the distinct rows and columns of the thread's
     * registers are loaded once per k and feed every register */
    int *ri = calloc((size_t)m->L, sizeof *ri), *ci = calloc((size_t)m->L, sizeof *ci);
    int64_t *rv = calloc((size_t)m->L, sizeof *rv), *cv = calloc((size_t)m->L, sizeof *cv);
    if (!ri || !ci || !rv || !cv) {
        free(ri), free(ci), free(rv), free(cv);
        tilec_simt_fail(c, "out of memory");
        return;
    }
    int nr = 0, nc = 0;
    for (int l = 0; l < m->L; l++) {
        int64_t g0 = m->g[l * 3], g1 = m->g[l * 3 + 1];
        int i, j;
        for (i = 0; i < nr && rv[i] != g0; i++)
            ;
        if (i == nr)
            rv[nr++] = g0;
        for (j = 0; j < nc && cv[j] != g1; j++)
            ;
        if (j == nc)
            cv[nc++] = g1;
        ri[l] = i;
        ci[l] = j;
    }
    const char *row0 = m->nterms[0] ? simt_fmt(c, "tc_f%d_0", C->id) : "0";
    const char *col0 = m->nterms[1] ? simt_fmt(c, "tc_f%d_1", C->id) : "0";
    for (int l = 0; l < m->L; l++) {
        const char *cl = tilec_simt_load(c, C, simt_fmt(c, "%d", l));
        tilec_simt_emit(c, "%s tc_c%d = %s;", act, l, s->u.gemm.clear_accum ? simt_zero(c, at) : tilec_simt_convert(c, cl, C->dtype, at));
    }
    tilec_simt_emit(c, "for (int tc_k = 0; tc_k < %" PRId64 "; tc_k++) {", K);
    c->ind++;
    for (int i = 0; i < nr; i++) {
        const char *mrow = simt_fmt(c, "(%s + %" PRId64 ")", row0, rv[i]);
        const char *ao = ta ? simt_gemm_off(c, s, 0, "tc_k", mrow) : simt_gemm_off(c, s, 0, mrow, "tc_k");
        tilec_simt_emit(c, "const %s tc_a%d = %s;", act, i, tilec_simt_convert(c, tilec_simt_load(c, A, ao), A->dtype, at));
    }
    for (int j = 0; j < nc; j++) {
        const char *ncol = simt_fmt(c, "(%s + %" PRId64 ")", col0, cv[j]);
        const char *bo = tb ? simt_gemm_off(c, s, 1, ncol, "tc_k") : simt_gemm_off(c, s, 1, "tc_k", ncol);
        tilec_simt_emit(c, "const %s tc_b%d = %s;", act, j, tilec_simt_convert(c, tilec_simt_load(c, B, bo), B->dtype, at));
    }
    for (int l = 0; l < m->L; l++)
        tilec_simt_emit(c, "tc_c%d = %s;", l,
                        simt_add(c, at, simt_fmt(c, "tc_c%d", l), simt_fmt(c, "tc_a%d * tc_b%d", ri[l], ci[l])));
    simt_close_block(c);
    for (int l = 0; l < m->L; l++)
        tilec_simt_emit(c, "%s", tilec_simt_store(c, C, simt_fmt(c, "%d", l), simt_store_conv(c, simt_fmt(c, "tc_c%d", l), at, C->dtype)));
    simt_close_block(c);
    free(ri), free(ci), free(rv), free(cv);
}

/* 1 when the replicas of every register of row vector md are xor-closed
 * lanes of one subgroup of the dialect: the thread holding replica r of
 * an element in register l finds the same element in register l of lane
 * tc_tid ^ b, for every bit b below R (a power of two no wider than the
 * subgroup).  The lanes of a row then combine their partial results with
 * log2(R) shuffles, with no scratch and no barrier.  Any thread that runs
 * register l's code has all its partners running it too, so a shuffle
 * inside the register's guard reads active lanes only. */
int simt_regs_lane_shuffle(const tilec_simt_ctx_t *c, const simt_regmap_t *md)
{
    int64_t R = md->R, sg = c->dl.subgroup_size;
    if (!c->dl.shfl_xor || R < 2 || (R & (R - 1)) || sg < R || c->nthreads % sg || !md->fitted)
        return 0;
    for (int64_t t = 0; t < md->T; t++)
        for (int l = 0; l < md->L; l++) {
            int64_t e = md->inv[t * md->L + l];
            if (e < 0)
                continue;
            for (int64_t b = 1; b < R; b <<= 1) {
                int64_t u = t ^ b, f = u < md->T ? md->inv[u * md->L + l] : -1;
                if (f < 0 || f / R != e / R)
                    return 0;
            }
        }
    return 1;
}

/* 1 when every thread holding register m of md holds register l of ms
 * (a ragged layout leaves the last registers of some lanes unheld) */
static int held_with(const simt_regmap_t *ms, int l, const simt_regmap_t *md, int m)
{
    for (int64_t t = 0; t < md->T; t++)
        if (md->inv[t * md->L + m] >= 0 && (t >= ms->T || ms->inv[t * ms->L + l] < 0))
            return 0;
    return 1;
}

/* A row reduction from a 2-D register fragment into a row vector.
 * lower.reduce = "thread": each thread holds whole rows and reduces them
 * into its registers of the row vector.  "shuffle": the lanes sharing a
 * row (the row vector's replicas) each reduce their own columns (skipping
 * the registers a ragged layout leaves them unheld), then combine: with
 * the dialect's xor shuffles when the lanes allow it
 * (simt_regs_lane_shuffle), else through the lane-exchange scratch in
 * block memory (one slot per row and replica, a barrier on each side),
 * which any dialect has. */
static void gen_reduce(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const simt_regmap_t *ms, const simt_regmap_t *md)
{
    const tilec_ir_buffer_t *src = s->u.reduce.src, *dst = s->u.reduce.dst;
    const tilec_ir_attr_t *how = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.reduce");
    int op = s->u.reduce.op;
    if (!how || how->kind != TILEC_ATTR_STRING || (strcmp(how->s, "thread") != 0 && strcmp(how->s, "shuffle") != 0)) {
        tilec_simt_fail(c, "reduce %s -> %s: lower.reduce = \"%s\" on registers is not supported by the SIMT kit",
                        src->name, dst->name, how && how->kind == TILEC_ATTR_STRING ? how->s : "?");
        return;
    }
    if (!ms || !md || !ms->fitted || !md->fitted || ms->nd != 3 || md->nd != 2 || s->u.reduce.dim != 1 ||
        ms->R != 1 || md->ext[0] != ms->ext[0]) {
        tilec_simt_fail(c, "reduce %s -> %s: only rows of a 2-D register fragment into a row vector", src->name,
                        dst->name);
        return;
    }
    int lanes = md->R, shfl = lanes > 1 && simt_regs_lane_shuffle(c, md);
    tilec_dtype_t at = simt_acc_dtype(dst->dtype);
    if (lanes > 1 && (strcmp(how->s, "shuffle") != 0 ||
                      (!shfl && c->xbytes < (uint64_t)(md->ext[0] * lanes) * tilec_dtype_size(at)))) {
        tilec_simt_fail(c, "reduce %s -> %s: a row across lanes needs lower.reduce = \"shuffle\"", src->name, dst->name);
        return;
    }
    /* which register of the row vector each source register reduces
     * into, the same in every thread; every row whole over its lanes */
    int *to = malloc(sizeof *to * (size_t)ms->L);
    int64_t *cols = calloc((size_t)md->ext[0], sizeof *cols);
    if (!to || !cols) {
        free(to);
        free(cols);
        tilec_simt_fail(c, "out of memory");
        return;
    }
    int sel[1] = {0};
    for (int l = 0; l < ms->L && !c->failed; l++) {
        int un = 0;
        to[l] = const_slot(ms, l, md, sel, &un);
        if (to[l] < 0)
            tilec_simt_fail(c, "reduce %s -> %s: a thread holds columns of a row but not the row's element", src->name,
                            dst->name);
    }
    for (int t = 0; t < md->T && !c->failed; t++)
        for (int m = 0; m < md->L; m++) {
            int64_t e = md->inv[(int64_t)t * md->L + m];
            if (e < 0)
                continue;
            int cnt = 0;
            for (int l = 0; l < ms->L; l++)
                cnt += to[l] == m && t < ms->T && ms->inv[(int64_t)t * ms->L + l] >= 0;
            if (cnt < 1)
                tilec_simt_fail(c, "reduce %s -> %s: a lane holds no column of its row", src->name, dst->name);
            cols[coord_of(md, e, 0)] += cnt;
        }
    for (int64_t r = 0; r < md->ext[0] && !c->failed; r++)
        if (cols[r] != ms->ext[1])
            tilec_simt_fail(c, "reduce %s -> %s: the lanes of a row do not hold it whole", src->name, dst->name);
    free(cols);
    const char *act = tilec_simt_ctype(c, at);
    int isabs = op == TILEC_RED_ABSSUM || op == TILEC_RED_ABSMAX;
    tilec_simt_emit(c, "{ /* reduce %s %s -> %s (registers, %d lane%s a row%s) */",
                    tilec_reduce_op_name((tilec_reduce_op_t)op), src->name ? src->name : "", dst->name ? dst->name : "",
                    lanes, lanes > 1 ? "s" : "", shfl ? ", shuffles" : "");
    c->ind++;
    const char *pq = c->dl.shared_ptr_qual, *X = NULL;
    if (lanes > 1 && !shfl) {
        X = c->dl.shared_decl ? simt_fmt(c, "tc_x_%s", tilec_dtype_name(at))
                              : simt_fmt(c, "((%s%s%s *)(tc_smem + %" PRIu64 "))", pq, *pq ? " " : "", act, c->xoff);
        tilec_simt_barrier(c); /* an earlier exchange may still be read */
    }
    for (int m = 0; m < md->L && !c->failed; m++) {
        slot_t sl;
        slot_open(c, md, m, &sl);
        /* start from a register every holder of this row element holds */
        int first = -1;
        for (int l = 0; l < ms->L && first < 0; l++)
            if (to[l] == m && held_with(ms, l, md, m))
                first = l;
        if (first < 0)
            tilec_simt_fail(c, "reduce %s -> %s: the lanes of a row share no column register", src->name, dst->name);
        for (int k = -1; first >= 0 && k < ms->L; k++) {
            int l = k < 0 ? first : k;
            if (to[l] != m || (k >= 0 && l == first))
                continue;
            const char *x = tilec_simt_convert(c, tilec_simt_load(c, src, simt_fmt(c, "%d", l)), src->dtype, at);
            if (isabs)
                x = simt_abs(c, at, x);
            if (k < 0) {
                tilec_simt_emit(c, "%s tc_acc = %s;", act, x);
                continue;
            }
            const char *co[TILEC_IR_MAX_DIMS + 1];
            const char *guard = held_with(ms, l, md, m) ? NULL : slot_coords(c, ms, l, co);
            const char *st = simt_fmt(c, "tc_acc = %s;", simt_red_combine(c, op, at, "tc_acc", x));
            if (guard)
                tilec_simt_emit(c, "if (%s) %s /* not every lane holds %s register %d */", guard, st,
                                src->name ? src->name : "", l);
            else
                tilec_simt_emit(c, "%s", st);
        }
        if (shfl) {
            const char *keys[] = {"v", "m", "w"};
            for (int b = lanes / 2; b > 0; b /= 2) {
                const char *vals[] = {"tc_acc", simt_fmt(c, "%d", b), simt_fmt(c, "%u", c->dl.subgroup_size)};
                tilec_simt_emit(c, "tc_acc = %s;",
                                simt_red_combine(c, op, at, "tc_acc", simt_subst(c, c->dl.shfl_xor, 3, keys, vals)));
            }
        }
        if (lanes > 1 && !shfl)
            tilec_simt_emit(c, "%s = tc_acc;", simt_elem(c, X, simt_fmt(c, "%s * %d + %s", sl.coord[0], lanes, sl.coord[1])));
        else
            simt_reduce_store(c, s, sl.slot);
        slot_close(c, &sl);
    }
    free(to);
    if (lanes > 1 && !shfl) {
        tilec_simt_barrier(c);
        for (int m = 0; m < md->L && !c->failed; m++) {
            slot_t sl;
            slot_open(c, md, m, &sl);
            tilec_simt_emit(c, "%s tc_acc = %s;", act, simt_elem(c, X, simt_fmt(c, "%s * %d", sl.coord[0], lanes)));
            for (int q = 1; q < lanes; q++)
                tilec_simt_emit(c, "tc_acc = %s;",
                                simt_red_combine(c, op, at, "tc_acc",
                                                 simt_elem(c, X, simt_fmt(c, "%s * %d + %d", sl.coord[0], lanes, q))));
            simt_reduce_store(c, s, sl.slot);
            slot_close(c, &sl);
        }
    }
    simt_close_block(c);
}

int simt_regs_stmt(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const simt_regmap_t *a, *b;
    switch (s->kind) {
    case TILEC_ST_FOR: {
        const tilec_ir_attr_t *d = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.dist");
        if (s->u.loop.kind != TILEC_LOOP_PARALLEL || c->per_thread || !d || d->kind != TILEC_ATTR_STRING ||
            strcmp(d->s, "regs") != 0)
            return 0;
        gen_nest(c, s);
        return 1;
    }
    case TILEC_ST_FILL:
        if (!(a = rmap(c, s->u.fill.dst.buf)))
            return 0;
        gen_fill(c, s, a);
        return 1;
    case TILEC_ST_COPY:
        a = rmap(c, s->u.copy.src.buf);
        b = rmap(c, s->u.copy.dst.buf);
        if (!a && !b)
            return 0;
        gen_copy(c, s, a, b);
        return 1;
    case TILEC_ST_GEMM:
        if (!(a = rmap(c, s->u.gemm.c))) {
            if (rmap(c, s->u.gemm.a) || rmap(c, s->u.gemm.b))
                tilec_simt_fail(c, "gemm: operands in registers with an accumulator elsewhere");
            return c->failed;
        }
        gen_gemm(c, s, a);
        return 1;
    case TILEC_ST_REDUCE:
        a = rmap(c, s->u.reduce.src);
        b = rmap(c, s->u.reduce.dst);
        if (!a && !b)
            return 0;
        gen_reduce(c, s, a, b);
        return 1;
    case TILEC_ST_CUMSUM:
        if (rmap(c, s->u.cumsum.src) || rmap(c, s->u.cumsum.dst)) {
            tilec_simt_fail(c, "cumsum on register fragments is not supported by the SIMT kit");
            return 1;
        }
        return 0;
    case TILEC_ST_PRINT:
        if (s->u.print.buf && rmap(c, s->u.print.buf)) {
            tilec_simt_fail(c, "printing register fragment '%s' is not supported by the SIMT kit", s->u.print.buf->name);
            return 1;
        }
        return 0;
    default: return 0;
    }
}
