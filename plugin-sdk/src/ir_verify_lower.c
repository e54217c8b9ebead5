/*
 * plugin-sdk/src/ir_verify_lower.c — the verifier's checks of what IR 1.1
 * adds (docs/ir.md §9): attribute lists (namespaced keys, the types of the
 * lower.* keys of the table below), layouts (checked by enumerating every
 * element of a constant-shape buffer with tilec_ir_eval_int: REGS maps in
 * range and injective, SMEM addresses in range and injective), the
 * shared-memory plan (byte ranges of shared buffers disjoint unless
 * lower.reuse_of says one reuses the other), mbarrier references, the
 * async-copy statements and gemm leading indices.  ir_verify.c walks the
 * kernel and calls these.
 */
#include "ir_verify_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- attributes (1.1) ------------------------------------------------- */

/* The lower.* keys the SDK's lowering passes set (docs/ir.md §9.1).  Add a
 * line here (and a row in the doc) for every new key. */
static const struct lower_key {
    const char *key;
    tilec_attr_kind_t kind;
    int n;        /* TUPLE: required length */
    int positive; /* INT/TUPLE: every value >= 1 */
} lower_keys[] = {
    {"lower.warp", TILEC_ATTR_TUPLE, 2, 1},      /* gemm: warp grid (wm, wn) */
    {"lower.mma", TILEC_ATTR_STRING, 0, 0},      /* gemm: instruction of the target description */
    {"lower.mma_shape", TILEC_ATTR_TUPLE, 3, 1}, /* gemm: (m, n, k) of that instruction */
    {"lower.vector", TILEC_ATTR_INT, 0, 1},      /* copy / parallel loop: elements per access */
    {"lower.reduce", TILEC_ATTR_STRING, 0, 0},   /* reduce: strategy ("warp_shuffle", ...) */
    {"lower.width", TILEC_ATTR_INT, 0, 1},       /* reduce: lanes that combine */
    {"lower.reuse_of", TILEC_ATTR_STRING, 0, 0}, /* shared buffer: may share bytes with the named one */
    {"lower.mma_tiles", TILEC_ATTR_TUPLE, 2, 1}, /* gemm: instructions per warp (group) along M, N */
    {"lower.simt", TILEC_ATTR_TUPLE, 2, 1},      /* gemm on plain cores: thread grid (ty, tx) */
    {"lower.dist", TILEC_ATTR_STRING, 0, 0},     /* parallel loop: "regs", iterations run by register owners */
    {"lower.stages", TILEC_ATTR_INT, 0, 1},      /* pipelined loop / ring buffer: stages */
    {"lower.mma_wait", TILEC_ATTR_INT, 0, 1},    /* async-MMA gemm: MMA groups left in flight after it */
    {"lower.zero", TILEC_ATTR_INT, 0, 1},        /* shared buffer: zeroed at kernel entry */
    {"lower.stage_fill", TILEC_ATTR_INT, 0, 1},  /* ring buffer: each stage written whole before it is read */
    {"lower.tma", TILEC_ATTR_TUPLE, 3, 0},       /* copy: bulk tensor box (rows, cols, swizzle bytes) */
    {"lower.warpspec", TILEC_ATTR_TUPLE, 2, 1},  /* loop: (consumer threads, producer threads after them) */
    {"lower.producer", TILEC_ATTR_INT, 0, 1},    /* statement of a warpspec loop: the producer's */
    {"lower.persistent", TILEC_ATTR_TUPLE, 2, 1}, /* loop: (tiles, blocks) of a persistent kernel's tile loop */
    {"lower.async", TILEC_ATTR_INT, 0, 1},       /* gather's innermost loop: its vectors are async copies */
    {"lower.mma_nowait", TILEC_ATTR_INT, 0, 1},  /* async-MMA gemm: issued, completed by a later hint "mma_wait" */
    {"lower.cluster", TILEC_ATTR_TUPLE, 3, 1},   /* ring loop: the blocks' cluster shape (x, y, z) */
    {"lower.multicast", TILEC_ATTR_TUPLE, 2, 0}, /* copy on an mbarrier: (issuing rank, cluster size), lands in every block */
    {"lower.cluster_arrive", TILEC_ATTR_INT, 0, 1}, /* barrier_arrive: on that barrier in each of the N blocks of the cluster */
    {"lower.issuer", TILEC_ATTR_INT, 0, 1},      /* barrier_wait: only the thread issuing the copies waits */
    {"lower.cluster_sync", TILEC_ATTR_INT, 0, 1}, /* barrier: of every thread of the cluster */
};

static const char *const attr_kind_names[] = {"int", "float", "string", "tuple"};

int irv_key_ok(const char *k, int need_ns)
{
    int start = 1, dots = 0;
    if (!k || !*k) {
        return 0;
    }
    for (; *k; k++) {
        int c = (unsigned char)*k;
        if (c == '.') {
            if (start) {
                return 0;
            }
            dots++;
            start = 1;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!start && c >= '0' && c <= '9')) {
            start = 0;
        } else {
            return 0;
        }
    }
    return !start && (dots > 0 || !need_ns);
}

/* what prefixes the messages: "" (a statement: irv_fail() names it), "buffer 'X': ". */
int irv_check_attrs(verifier_t *v, int n, const tilec_ir_attr_t *list, const char *what, int need_ns)
{
    int i, j;
    if (n < 0 || (n > 0 && !list)) {
        irv_fail(v, "%sbad attribute list", what);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const tilec_ir_attr_t *a = &list[i];
        if (!irv_key_ok(a->key, need_ns)) {
            irv_fail(v, "%sattribute key '%s'; keys are %s", what, a->key ? a->key : "(null)",
                 need_ns ? "namespaced identifiers (ns.name)" : "identifiers");
            return -1;
        }
        for (j = 0; j < i; j++) {
            if (strcmp(list[j].key, a->key) == 0) {
                irv_fail(v, "%sattribute '%s' appears twice", what, a->key);
                return -1;
            }
        }
        if ((unsigned)a->kind > TILEC_ATTR_TUPLE || (a->kind == TILEC_ATTR_STRING && !a->s) ||
            (a->kind == TILEC_ATTR_TUPLE && (a->n < 0 || (a->n > 0 && !a->tuple)))) {
            irv_fail(v, "%sattribute '%s' has a malformed value", what, a->key);
            return -1;
        }
        if (need_ns && strncmp(a->key, "lower.", 6) == 0) {
            const struct lower_key *lk = NULL;
            size_t t;
            for (t = 0; t < sizeof lower_keys / sizeof lower_keys[0]; t++) {
                if (strcmp(lower_keys[t].key, a->key) == 0) {
                    lk = &lower_keys[t];
                }
            }
            if (!lk) {
                irv_fail(v, "%sunknown attribute '%s' (the lower.* keys are listed in docs/ir.md)", what, a->key);
                return -1;
            }
            if (a->kind != lk->kind || (lk->kind == TILEC_ATTR_TUPLE && a->n != lk->n)) {
                if (lk->kind == TILEC_ATTR_TUPLE) {
                    irv_fail(v, "%sattribute '%s' must be a tuple of %d ints", what, a->key, lk->n);
                } else {
                    irv_fail(v, "%sattribute '%s' must be a %s, not a %s", what, a->key, attr_kind_names[lk->kind],
                         attr_kind_names[a->kind]);
                }
                return -1;
            }
            if (lk->positive) {
                int bad = a->kind == TILEC_ATTR_INT && a->i < 1;
                for (j = 0; a->kind == TILEC_ATTR_TUPLE && j < a->n; j++) {
                    bad |= a->tuple[j] < 1;
                }
                if (bad) {
                    irv_fail(v, "%sattribute '%s' must be >= 1", what, a->key);
                    return -1;
                }
            }
        }
    }
    return 0;
}

/* ---- layouts (1.1) ---------------------------------------------------- */

/* Largest number of elements (times replicas) a layout check enumerates,
 * and the largest register/address table it builds. */
#define LAYOUT_MAX_ELEMS (1 << 20)
#define LAYOUT_MAX_SLOTS (1 << 22)

typedef struct lbind {
    const tilec_ir_layout_t *l;
    int64_t idx[TILEC_IR_MAX_DIMS + 1]; /* [ndim] = replica */
} lbind_t;

static int lbind(void *ctx, const tilec_ir_var_t *x, int64_t *out)
{
    const lbind_t *b = ctx;
    if (x->kind != TILEC_VAR_LAYOUT || x->id < 0 || x->id > b->l->ndim) {
        return -1;
    }
    *out = b->idx[x->id];
    return 0;
}

static int check_layout_expr(verifier_t *v, const tilec_ir_expr_t *e, const char *field, const tilec_ir_buffer_t *b)
{
    if (irv_check_expr(v, e, CTX_LAYOUT, 0) < 0) {
        return -1;
    }
    if (e->dtype != TILEC_INT32) {
        irv_fail(v, "layout of '%s': %s has dtype %s, must be int32", irv_bname(b), field, tilec_dtype_name(e->dtype));
        return -1;
    }
    return 0;
}

static void fmt_idx(char *out, size_t cap, const int64_t *idx, int n)
{
    size_t used = 0;
    int d;
    out[0] = '\0';
    for (d = 0; d < n && used < cap; d++) {
        int w = snprintf(out + used, cap - used, "%s%lld", d ? ", " : "", (long long)idx[d]);
        if (w < 0) {
            break;
        }
        used += (size_t)w;
    }
}

/* Enumerates every element (and replica) of b: REGS maps in range and
 * injective, SMEM addresses in range and injective. */
static int enumerate_layout(verifier_t *v, const tilec_ir_buffer_t *b, const tilec_ir_layout_t *l)
{
    int64_t shape[TILEC_IR_MAX_DIMS], total = tilec_ir_buffer_const_size(b), nslots, e, reps;
    int32_t *owner;
    lbind_t bind;
    int d, rc = -1;
    size_t es = tilec_dtype_size(b->dtype);
    reps = l->kind == TILEC_LAYOUT_REGS ? l->replicate : 1;
    nslots = l->kind == TILEC_LAYOUT_REGS ? (int64_t)l->threads * l->nlocal : l->size / (int64_t)es;
    if (total < 0 || total * reps > LAYOUT_MAX_ELEMS || nslots > LAYOUT_MAX_SLOTS) {
        return 0; /* too large to enumerate: checked by the interpreter's tables */
    }
    for (d = 0; d < b->ndim; d++) {
        tilec_ir_is_const_int(b->shape[d], &shape[d]);
    }
    owner = malloc((size_t)(nslots > 0 ? nslots : 1) * sizeof *owner);
    if (!owner) {
        irv_fail(v, "out of memory checking the layout of '%s'", irv_bname(b));
        return -1;
    }
    memset(owner, 0xff, (size_t)(nslots > 0 ? nslots : 1) * sizeof *owner); /* -1: free */
    memset(&bind, 0, sizeof bind);
    bind.l = l;
    for (e = 0; e < total; e++) {
        int64_t rest = e, r;
        for (d = b->ndim - 1; d >= 0; d--) {
            bind.idx[d] = rest % shape[d];
            rest /= shape[d];
        }
        for (r = 0; r < reps; r++) {
            char is[160];
            int64_t slot;
            bind.idx[l->ndim] = r;
            if (l->kind == TILEC_LAYOUT_REGS) {
                int64_t t, loc;
                if (tilec_ir_eval_int(l->thread, lbind, &bind, &t) < 0 ||
                    tilec_ir_eval_int(l->local, lbind, &bind, &loc) < 0) {
                    fmt_idx(is, sizeof is, bind.idx, b->ndim);
                    irv_fail(v, "layout of '%s' cannot be evaluated at element [%s]", irv_bname(b), is);
                    goto out;
                }
                if (t < 0 || t >= l->threads || loc < 0 || loc >= l->nlocal) {
                    fmt_idx(is, sizeof is, bind.idx, b->ndim);
                    irv_fail(v, "layout of '%s' puts element [%s] (replica %lld) in thread %lld, register %lld; "
                         "threads=%d nlocal=%d", irv_bname(b), is, (long long)r, (long long)t, (long long)loc,
                         l->threads, l->nlocal);
                    goto out;
                }
                slot = t * l->nlocal + loc;
            } else {
                if (tilec_ir_eval_int(l->addr, lbind, &bind, &slot) < 0) {
                    fmt_idx(is, sizeof is, bind.idx, b->ndim);
                    irv_fail(v, "layout of '%s' cannot be evaluated at element [%s]", irv_bname(b), is);
                    goto out;
                }
                if (slot < 0 || slot >= nslots) {
                    fmt_idx(is, sizeof is, bind.idx, b->ndim);
                    irv_fail(v, "layout of '%s' puts element [%s] at address %lld, outside its %lld bytes", irv_bname(b), is,
                         (long long)slot, (long long)l->size);
                    goto out;
                }
            }
            if (owner[slot] >= 0 && owner[slot] != (int32_t)e) {
                int64_t other[TILEC_IR_MAX_DIMS], rest2 = owner[slot];
                char os[160];
                for (d = b->ndim - 1; d >= 0; d--) {
                    other[d] = rest2 % shape[d];
                    rest2 /= shape[d];
                }
                fmt_idx(is, sizeof is, bind.idx, b->ndim);
                fmt_idx(os, sizeof os, other, b->ndim);
                irv_fail(v, "layout of '%s' is not injective: elements [%s] and [%s] share %s %lld", irv_bname(b), os, is,
                     l->kind == TILEC_LAYOUT_REGS ? "thread/register slot" : "address", (long long)slot);
                goto out;
            }
            owner[slot] = (int32_t)e;
        }
    }
    rc = 0;
out:
    free(owner);
    return rc;
}

int irv_check_layout(verifier_t *v, const tilec_ir_buffer_t *b)
{
    const tilec_ir_layout_t *l = b->layout;
    int d, rc;
    char what[160];
    snprintf(what, sizeof what, "layout of '%s': ", irv_bname(b));
    if ((unsigned)l->kind > TILEC_LAYOUT_SMEM) {
        irv_fail(v, "%sinvalid kind %d", what, (int)l->kind);
        return -1;
    }
    if (l->kind == TILEC_LAYOUT_REGS ? (b->scope != TILEC_SCOPE_FRAGMENT && b->scope != TILEC_SCOPE_LOCAL)
                                     : b->scope != TILEC_SCOPE_SHARED && b->scope != TILEC_SCOPE_FRAGMENT) {
        irv_fail(v, "'%s' is %s; a %s layout needs a %s buffer", irv_bname(b), tilec_scope_name(b->scope),
             tilec_layout_kind_name(l->kind), l->kind == TILEC_LAYOUT_REGS ? "fragment or local" : "shared or fragment");
        return -1;
    }
    if (!l->name || l->ndim != b->ndim || !l->rvar || l->rvar->id != l->ndim) {
        irv_fail(v, "%smalformed (name, rank %d for a rank-%d buffer, or placeholders)", what, l->ndim, b->ndim);
        return -1;
    }
    for (d = 0; d < l->ndim; d++) {
        if (!l->ivar[d] || l->ivar[d]->id != d || l->ivar[d]->kind != TILEC_VAR_LAYOUT) {
            irv_fail(v, "%smalformed placeholder _i%d", what, d);
            return -1;
        }
    }
    if (irv_check_attrs(v, l->nparams, l->params, what, 0) < 0) {
        return -1;
    }
    v->lay = l;
    if (l->kind == TILEC_LAYOUT_REGS) {
        int64_t nthreads = (int64_t)v->k->threads[0] * v->k->threads[1] * v->k->threads[2];
        if (l->threads < 1 || l->nlocal < 1 || l->replicate < 1 || l->threads > nthreads) {
            irv_fail(v, "%sthreads=%d nlocal=%d replicate=%d (each >= 1, threads <= the block's %lld)", what,
                 l->threads, l->nlocal, l->replicate, (long long)nthreads);
            v->lay = NULL;
            return -1;
        }
        rc = check_layout_expr(v, l->thread, "thread", b) < 0 || check_layout_expr(v, l->local, "local", b) < 0;
    } else {
        if (l->offset < 0 || l->size < (int64_t)tilec_dtype_size(b->dtype) || l->offset > INT32_MAX - l->size) {
            irv_fail(v, "%soffset=%lld size=%lld", what, (long long)l->offset, (long long)l->size);
            v->lay = NULL;
            return -1;
        }
        rc = check_layout_expr(v, l->addr, "addr", b) < 0;
    }
    v->lay = NULL;
    if (rc) {
        return -1;
    }
    return enumerate_layout(v, b, l);
}

/* SMEM byte ranges of shared buffers do not overlap unless one of the two
 * says lower.reuse_of = "<the other>". */
static int reuses(const tilec_ir_buffer_t *a, const tilec_ir_buffer_t *b)
{
    const tilec_ir_attr_t *r = tilec_ir_attr_get(a->nattrs, a->attrs, "lower.reuse_of");
    return r && r->kind == TILEC_ATTR_STRING && strcmp(r->s, b->name) == 0;
}

/* a buffer the shared-memory plan places: shared, or a fragment kept out of registers */
static int on_chip_smem(const tilec_ir_buffer_t *b)
{
    return b->scope == TILEC_SCOPE_SHARED || b->scope == TILEC_SCOPE_FRAGMENT;
}

int irv_check_smem_plan(verifier_t *v)
{
    const tilec_ir_kernel_t *k = v->k;
    int i, j;
    for (i = 0; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *a = k->bufs[i];
        const tilec_ir_attr_t *r = tilec_ir_attr_get(a->nattrs, a->attrs, "lower.reuse_of");
        if (r) {
            for (j = 0; j < k->nbufs && strcmp(k->bufs[j]->name, r->s) != 0; j++) {
            }
            if (j == k->nbufs || j == i || !on_chip_smem(k->bufs[j]) || !on_chip_smem(a)) {
                irv_fail(v, "buffer '%s': lower.reuse_of names '%s', which is not another shared buffer", a->name, r->s);
                return -1;
            }
        }
        if (!a->layout || a->layout->kind != TILEC_LAYOUT_SMEM) {
            continue;
        }
        for (j = 0; j < i; j++) {
            const tilec_ir_buffer_t *b = k->bufs[j];
            const tilec_ir_layout_t *la = a->layout, *lb = b->layout;
            if (!lb || lb->kind != TILEC_LAYOUT_SMEM || reuses(a, b) || reuses(b, a)) {
                continue;
            }
            if (la->offset < lb->offset + lb->size && lb->offset < la->offset + la->size) {
                irv_fail(v, "shared buffers '%s' [%lld, %lld) and '%s' [%lld, %lld) overlap (mark a reuse with "
                     "lower.reuse_of)", b->name, (long long)lb->offset, (long long)(lb->offset + lb->size), a->name,
                     (long long)la->offset, (long long)(la->offset + la->size));
                return -1;
            }
        }
    }
    return 0;
}

/* ---- mbarriers and the 1.1 statements --------------------------------- */

/* barrier b of the kernel's table, element idx of it (idx NULL: the whole array) */
static int check_mbar_elem(verifier_t *v, const tilec_ir_mbarrier_t *b, const tilec_ir_expr_t *idx)
{
    int64_t i;
    if (!b || b->id < 0 || b->id >= v->k->nmbars || v->k->mbars[b->id] != b) {
        irv_fail(v, "mbarrier '%s' is missing or not declared", b && b->name ? b->name : "?");
        return -1;
    }
    if (!idx) {
        return 0;
    }
    if (irv_check_int_expr(v, idx, "mbarrier index") < 0) {
        return -1;
    }
    if (tilec_ir_is_const_int(idx, &i) && (i < 0 || i >= b->size)) {
        irv_fail(v, "index %lld is outside mbarrier '%s' of size %d", (long long)i, b->name, b->size);
        return -1;
    }
    return 0;
}

int irv_check_mbar_ref(verifier_t *v, const tilec_ir_stmt_t *s)
{
    int64_t tx;
    if (s->kind != TILEC_ST_MBAR_INIT && !s->u.mbar.idx) {
        irv_fail(v, "%s without a barrier index", tilec_stmt_kind_name(s->kind));
        return -1;
    }
    if (check_mbar_elem(v, s->u.mbar.bar, s->kind == TILEC_ST_MBAR_INIT ? NULL : s->u.mbar.idx) < 0) {
        return -1;
    }
    if (s->kind == TILEC_ST_MBAR_WAIT && irv_check_int_expr(v, s->u.mbar.parity, "wait parity") < 0) {
        return -1;
    }
    if (s->kind == TILEC_ST_MBAR_ARRIVE && s->u.mbar.tx) {
        if (irv_check_int_expr(v, s->u.mbar.tx, "expect_tx bytes") < 0) {
            return -1;
        }
        if (tilec_ir_is_const_int(s->u.mbar.tx, &tx) && (tx < 0 || tx >= ((int64_t)1 << 20))) {
            irv_fail(v, "expect_tx %lld: the bytes of one arrival must be in 0..2^20-1", (long long)tx);
            return -1;
        }
    }
    return 0;
}


int irv_check_copy_async(verifier_t *v, const tilec_ir_stmt_t *s)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    if (irv_check_copy(v, s) < 0) {
        return -1;
    }
    if (dst->buf->scope != TILEC_SCOPE_SHARED || src->buf->scope != TILEC_SCOPE_GLOBAL) {
        irv_fail(v, "copies global into shared memory; '%s' is %s and '%s' is %s", irv_bname(src->buf),
             tilec_scope_name(src->buf->scope), irv_bname(dst->buf), tilec_scope_name(dst->buf->scope));
        return -1;
    }
    if (src->buf->dtype != dst->buf->dtype) {
        irv_fail(v, "'%s' (%s) and '%s' (%s) must share a dtype (an async copy moves bytes)", irv_bname(src->buf),
             tilec_dtype_name(src->buf->dtype), irv_bname(dst->buf), tilec_dtype_name(dst->buf->dtype));
        return -1;
    }
    if (s->u.copy.bar || s->u.copy.bar_idx) {
        if (!s->u.copy.bar_idx) {
            irv_fail(v, "copy_async into '%s' names an mbarrier without an index", irv_bname(dst->buf));
            return -1;
        }
        return check_mbar_elem(v, s->u.copy.bar, s->u.copy.bar_idx);
    }
    return 0;
}

/* Leading (stage) indices of a gemm operand: present exactly when rank > 2. */
int irv_check_gemm_lead(verifier_t *v, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *lead, const char *role)
{
    int i;
    if (b->ndim <= 2) {
        if (lead) {
            irv_fail(v, "%s operand '%s' is 2-D and takes no leading indices", role, irv_bname(b));
            return -1;
        }
        return 0;
    }
    if (!lead) {
        irv_fail(v, "%s operand '%s' has rank %d; give its %d leading indices (%s[s])", role, irv_bname(b), b->ndim,
             b->ndim - 2, irv_bname(b));
        return -1;
    }
    for (i = 0; i < b->ndim - 2; i++) {
        int64_t x, dim;
        if (irv_check_index(v, lead[i], "leading index", b, CTX_BODY, 0) < 0) {
            return -1;
        }
        if (tilec_ir_is_const_int(lead[i], &x) && irv_const_dim(b, i, &dim) && (x < 0 || x >= dim)) {
            irv_fail(v, "leading index %lld of '%s' is outside dimension %d of size %lld", (long long)x, irv_bname(b), i,
                 (long long)dim);
            return -1;
        }
    }
    return 0;
}
