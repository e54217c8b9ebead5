/*
 * simt_atomic.c — the SIMT kit's T.atomic_add/max/min: the dialect's
 * native atomic where it has one for the dtype, else a compare-and-swap
 * loop on the 32- or 64-bit word holding the element (sub-word elements
 * shifted and masked into it; GLSL-like dialects CAS on an aliased word
 * view of the tensor), and plain read-modify-write on per-thread buffers.
 * Split from simt.c, whose statement walker calls simt_gen_atomic.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "simt_internal.h"

static tilec_dtype_t unsigned_dtype(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_BOOL: case TILEC_INT8: return TILEC_UINT8;
    case TILEC_INT16: return TILEC_UINT16;
    case TILEC_INT32: return TILEC_UINT32;
    case TILEC_INT64: return TILEC_UINT64;
    default: return t;
    }
}

static const char *atomic_apply(tilec_simt_ctx_t *c, int op, tilec_dtype_t t, const char *cur, const char *v)
{
    if (op == TILEC_ATOMIC_ADD)
        return t == TILEC_BOOL ? (c->dl.bool_type ? simt_cast(c, "", c->dl.type_name[TILEC_INT32],
                                                              simt_fmt(c, "%s || %s", simt_cond(c, cur), simt_cond(c, v)))
                                                  : simt_fmt(c, "((%s) || (%s))", cur, v))
                               : simt_add(c, t, cur, v);
    return simt_fmt(c, op == TILEC_ATOMIC_MAX ? "((%s) > (%s) ? (%s) : (%s))" : "((%s) < (%s) ? (%s) : (%s))", v, cur,
                    v, cur);
}

void simt_gen_atomic(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *b = s->u.atomic.buf;
    if (!simt_buf_ok(c, b) || !s->u.atomic.value)
        return;
    int op = s->u.atomic.op;
    if (op < TILEC_ATOMIC_ADD || op > TILEC_ATOMIC_MIN) {
        tilec_simt_fail(c, "unknown atomic op %d", op);
        return;
    }
    tilec_dtype_t t = b->dtype;
    const char *off = tilec_simt_offset(c, b, s->u.atomic.idx);
    const char *ct = tilec_simt_ctype(c, t);
    const char *val = tilec_simt_convert(c, tilec_simt_expr(c, s->u.atomic.value), s->u.atomic.value->dtype, t);
    tilec_simt_emit(c, "{ /* atomic %s %s */", tilec_atomic_op_name((tilec_atomic_op_t)op), b->name ? b->name : "?");
    c->ind++;
    tilec_simt_emit(c, "const %s tc_av = %s;", ct, val);
    if (simt_is_private(b)) {
        tilec_simt_emit(c, "%s", tilec_simt_store(c, b, off, atomic_apply(c, op, t, tilec_simt_load(c, b, off), "tc_av")));
        simt_close_block(c);
        return;
    }
    c->uses |= TILEC_SIMT_USES_ATOMIC;
    if (simt_is_flt(t))
        c->uses |= TILEC_SIMT_USES_ATOMIC_FLOAT;
    size_t sz = tilec_dtype_size(t);
    if (sz == 8)
        c->uses |= TILEC_SIMT_USES_ATOMIC_64;
    const char *aq = b->scope == TILEC_SCOPE_GLOBAL ? c->dl.global_qual : c->dl.shared_ptr_qual;
    const char *nm = tilec_simt_buf_name(c, b);
    const char *native = c->dl.atomic[t][op];
    if (native) {
        const char *keys[] = {"p", "v", "a"};
        const char *vals[] = {c->dl.tensor_decl ? simt_elem(c, nm, off) : simt_fmt(c, "(&%s[%s])", nm, off),
                              simt_cast(c, "((%s)%s)", simt_st_type(c, b), "tc_av"), aq};
        tilec_simt_emit(c, "%s", simt_subst(c, native, 3, keys, vals));
        simt_close_block(c);
        return;
    }
    const char *cas = sz == 8 ? c->dl.cas64 : c->dl.cas32;
    if (!cas) {
        tilec_simt_fail(c, "the %s dialect has no %s compare-and-swap for atomic %s on %s", c->dl.name,
                        sz == 8 ? "64-bit" : "32-bit", tilec_atomic_op_name((tilec_atomic_op_t)op), tilec_dtype_name(t));
        simt_close_block(c);
        return;
    }
    const char *W = c->dl.type_name[sz == 8 ? TILEC_UINT64 : TILEC_UINT32];
    const char *U8 = c->dl.type_name[TILEC_UINT8];
    /* the word holding the element; sub-word elements are shifted into it.
     * `word` is that word as an lvalue: *tc_p with pointers, else an
     * element of the tensor's word view b<i>_w32 / b<i>_w64 (tensor_decl
     * dialects declare it with word_decl). */
    const char *word = "*tc_p";
    if (c->dl.tensor_decl) {
        if (b->scope != TILEC_SCOPE_GLOBAL || !c->dl.word_decl || b->id >= 64) {
            tilec_simt_fail(c, "the %s dialect has no native atomic %s on %s in %s memory, and cannot reinterpret "
                            "that memory for a compare-and-swap loop", c->dl.name,
                            tilec_atomic_op_name((tilec_atomic_op_t)op), tilec_dtype_name(t), tilec_scope_name(b->scope));
            simt_close_block(c);
            return;
        }
        if (sz == 8)
            c->words64 |= 1ull << b->id;
        else
            c->words32 |= 1ull << b->id;
        const char *I = c->dl.type_name[TILEC_INT64];
        const char *wi = sz >= 4 ? off : simt_fmt(c, "(%s) * %zu / 4", off, sz);
        word = simt_elem(c, simt_fmt(c, "%s_w%d", nm, sz == 8 ? 64 : 32), simt_cast(c, "(%s)(%s)", I, wi));
        if (sz < 4)
            tilec_simt_emit(c, "const %s tc_bo = %s;", W, simt_cast(c, "(%s)(%s)", W, simt_fmt(c, "((%s) * %zu) & 3", off, sz)));
    } else if (sz >= 4) {
        tilec_simt_emit(c, "volatile %s %s *tc_p = (volatile %s %s *)(&%s[%s]);", aq, W, aq, W, nm, off);
    } else {
        tilec_simt_emit(c, "const %s tc_bo = (%s)(((%s) * %zu) & 3);", W, W, off, sz);
        tilec_simt_emit(c, "volatile %s %s *tc_p = (volatile %s %s *)((%s %s *)(&%s[%s]) - tc_bo);", aq, W, aq, W, aq,
                        U8, nm, off);
    }
    if (sz < 4)
        tilec_simt_emit(c, "const %s tc_sh = tc_bo * 8u, tc_mask = %s << tc_sh;", W,
                        simt_cast(c, "(%s)%s", W, simt_fmt(c, "0x%xu", sz == 2 ? 0xffffu : 0xffu)));
    tilec_simt_emit(c, "%s tc_old = %s, tc_exp;", W, word);
    tilec_simt_emit(c, "do {");
    c->ind++;
    tilec_simt_emit(c, "tc_exp = tc_old;");
    /* current element value, in compute type */
    const char *cur, *bits_of_new;
    const char *part = sz >= 4 ? "tc_exp" : "((tc_exp & tc_mask) >> tc_sh)";
    if (t == TILEC_FLOAT32) {
        cur = simt_fmt(c, "%s(%s)", c->dl.bits_as_f32, part);
        bits_of_new = simt_fmt(c, "%s(tc_new)", c->dl.f32_as_bits);
    } else if (t == TILEC_FLOAT64) {
        if (!c->dl.bits_as_f64 || !c->dl.f64_as_bits) {
            tilec_simt_fail(c, "the %s dialect lacks double bit casts for a float64 atomic", c->dl.name);
            return;
        }
        cur = simt_fmt(c, "%s(%s)", c->dl.bits_as_f64, part);
        bits_of_new = simt_fmt(c, "%s(tc_new)", c->dl.f64_as_bits);
    } else if (simt_is_half(t)) {
        cur = simt_half_from_bits(c, t, simt_cast(c, "(%s)%s", c->dl.type_name[TILEC_UINT16], part));
        bits_of_new = simt_cast(c, "(%s)%s", W, simt_half_bits(c, t, "tc_new"));
    } else {
        cur = simt_cast(c, "((%s)%s)", ct, simt_cast(c, "(%s)%s", c->dl.type_name[t == TILEC_BOOL ? TILEC_UINT8 : t], part));
        bits_of_new = simt_cast(c, "((%s)%s)", W, simt_cast(c, "(%s)%s", c->dl.type_name[unsigned_dtype(t)], "tc_new"));
    }
    tilec_simt_emit(c, "const %s tc_new = %s;", ct, atomic_apply(c, op, t, cur, "tc_av"));
    const char *nb = sz >= 4 ? bits_of_new : simt_fmt(c, "((tc_exp & ~tc_mask) | ((%s << tc_sh) & tc_mask))", bits_of_new);
    const char *keys[] = {"p", "c", "v", "a"};
    const char *vals[] = {c->dl.tensor_decl ? word : "tc_p", "tc_exp", nb, aq};
    tilec_simt_emit(c, "tc_old = %s;", simt_subst(c, cas, 4, keys, vals));
    c->ind--;
    tilec_simt_emit(c, "} while (tc_old != tc_exp);");
    simt_close_block(c);
}
