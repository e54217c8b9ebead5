/*
 * frontend/pystr.c — compile-time text: str() and repr() of compile-time
 * values, format specs, and f-strings.
 *
 * Factories build messages (`assert N % b == 0, f"N={N} ..."`), names and
 * dtype strings (`f"float{bits}"`) at compile time, so tilec renders values
 * the way Python does: ints in decimal, floats in their shortest
 * round-tripping form ("0.1", "1.0", "inf"), strings quoted by repr, tuples,
 * lists and dicts with their brackets.  Format specs follow Python's
 * mini-language `[[fill]align][sign][0][width][,][.precision][type]` for
 * the types d x X o b f F e E g G % s.
 */
#include "eval_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf { char *s; size_t n, cap; } sbuf_t;

static void sb_put(ev_t *ev, sbuf_t *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t nc = (b->cap ? b->cap * 2 : 64) + n;
        char *ns;
        if (nc > (size_t)EV_MAX_SEQ) ev_fail(ev, ev->cur_loc, "compile-time string too long");
        ns = ev_alloc(ev, nc);
        if (b->n) memcpy(ns, b->s, b->n);
        b->s = ns;
        b->cap = nc;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_cstr(ev_t *ev, sbuf_t *b, const char *s) { sb_put(ev, b, s, strlen(s)); }

/* Python's repr of a float: the shortest form that reads back the same. */
static void float_repr(double f, char *buf, size_t n)
{
    int p;
    if (isnan(f)) { snprintf(buf, n, "nan"); return; }
    if (isinf(f)) { snprintf(buf, n, f < 0 ? "-inf" : "inf"); return; }
    for (p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, f);
        if (strtod(buf, NULL) == f) break;
    }
    if (!strpbrk(buf, ".en")) {
        size_t l = strlen(buf);
        if (l + 2 < n) memcpy(buf + l, ".0", 3);
    }
}

static void put_value(ev_t *ev, sbuf_t *b, value_t *v, int repr, ast_loc_t loc, int depth)
{
    char buf[64];
    int i;
    if (depth > 32) ev_fail(ev, loc, "value nested too deeply to print");
    switch (v->kind) {
    case V_STR:
        if (!repr) {
            sb_put(ev, b, v->u.s.s, v->u.s.len);
        } else {
            sb_cstr(ev, b, "'");
            sb_put(ev, b, v->u.s.s, v->u.s.len);
            sb_cstr(ev, b, "'");
        }
        return;
    case V_INT: snprintf(buf, sizeof buf, "%lld", (long long)v->u.i); break;
    case V_BOOL: snprintf(buf, sizeof buf, "%s", v->u.i ? "True" : "False"); break;
    case V_FLOAT: float_repr(v->u.f, buf, sizeof buf); break;
    case V_NONE: snprintf(buf, sizeof buf, "None"); break;
    case V_DTYPE: snprintf(buf, sizeof buf, "%s", tilec_dtype_name(v->u.dt)); break;
    case V_SYM: sb_cstr(ev, b, v->u.sym->name); return;
    case V_BUF: sb_cstr(ev, b, v->u.buf->name); return;
    case V_RANGE:
        snprintf(buf, sizeof buf, "range(%lld, %lld, %lld)", (long long)v->u.range.start, (long long)v->u.range.stop,
                 (long long)v->u.range.step);
        break;
    case V_SEQ:
        sb_cstr(ev, b, v->u.seq.is_list ? "[" : "(");
        for (i = 0; i < v->u.seq.n; i++) {
            if (i) sb_cstr(ev, b, ", ");
            put_value(ev, b, v->u.seq.items[i], 1, loc, depth + 1);
        }
        sb_cstr(ev, b, v->u.seq.is_list ? "]" : v->u.seq.n == 1 ? ",)" : ")");
        return;
    case V_DICT:
        sb_cstr(ev, b, "{");
        for (i = 0; i + 1 < v->u.seq.n; i += 2) {
            if (i) sb_cstr(ev, b, ", ");
            put_value(ev, b, v->u.seq.items[i], 1, loc, depth + 1);
            sb_cstr(ev, b, ": ");
            put_value(ev, b, v->u.seq.items[i + 1], 1, loc, depth + 1);
        }
        sb_cstr(ev, b, "}");
        return;
    case V_FUNC: /* print(kernel) in a factory: what Python shows of a function */
        sb_cstr(ev, b, "<function ");
        sb_cstr(ev, b, v->u.fn->def->u.def.name);
        sb_cstr(ev, b, ">");
        return;
    case V_OPAQUE:
        sb_cstr(ev, b, "<");
        sb_cstr(ev, b, v->u.opq);
        sb_cstr(ev, b, ">");
        return;
    default:
        ev_fail(ev, loc, "str() of %s is not supported at compile time", v_kind_name(v));
    }
    sb_cstr(ev, b, buf);
}

value_t *v_to_str(ev_t *ev, value_t *v, int repr, ast_loc_t loc)
{
    sbuf_t b = {0};
    if (v->kind == V_STR && !repr) return v;
    put_value(ev, &b, v, repr, loc, 0);
    return v_str(ev, b.s ? b.s : "", b.n);
}

/* ---- format specs ----------------------------------------------------------- */

static void add_commas(char *num, size_t cap)
{
    char tmp[128], *dot, *start = num;
    size_t len, intlen, i, o = 0, k;
    if (*start == '-' || *start == '+' || *start == ' ') start++;
    dot = strchr(start, '.');
    if (!dot) dot = strchr(start, 'e');
    intlen = dot ? (size_t)(dot - start) : strlen(start);
    len = strlen(start);
    if (intlen <= 3 || len + intlen / 3 + 1 >= sizeof tmp) return;
    for (i = 0; i < intlen; i++) {
        tmp[o++] = start[i];
        k = intlen - i - 1;
        if (k && k % 3 == 0) tmp[o++] = ',';
    }
    memcpy(tmp + o, start + intlen, len - intlen + 1);
    if ((size_t)(start - num) + strlen(tmp) + 1 <= cap) memcpy(start, tmp, strlen(tmp) + 1);
}

value_t *v_format(ev_t *ev, value_t *v, const char *spec, ast_loc_t loc)
{
    char fill = ' ', align = 0, sign = '-', type = 0, num[128];
    int zero = 0, comma = 0, alt = 0;
    long width = 0, prec = -1;
    const char *p = spec;
    value_t *sv;
    size_t len, pad, i;
    sbuf_t b = {0};
    if (!spec || !*spec) return v_to_str(ev, v, 0, loc);
    if (p[0] && (p[1] == '<' || p[1] == '>' || p[1] == '^' || p[1] == '=')) {
        fill = p[0];
        align = p[1];
        p += 2;
    } else if (*p == '<' || *p == '>' || *p == '^' || *p == '=') {
        align = *p++;
    }
    if (*p == '+' || *p == '-' || *p == ' ') sign = *p++;
    if (*p == '#') { alt = 1; p++; }
    if (*p == '0') { zero = 1; p++; }
    while (*p >= '0' && *p <= '9' && width < 10000) width = width * 10 + (*p++ - '0');
    if (*p == ',' || *p == '_') { comma = 1; p++; }
    if (*p == '.') {
        p++;
        prec = 0;
        while (*p >= '0' && *p <= '9' && prec < 100) prec = prec * 10 + (*p++ - '0');
    }
    if (*p) type = *p++;
    if (*p || width >= 10000 || prec >= 100)
        ev_fail(ev, loc, "invalid format spec '%s'", spec);
    if (v->kind == V_STR || (type == 's') || (!type && !v_is_num(v))) {
        if (type && type != 's') ev_fail(ev, loc, "format spec '%s' needs a number, got %s", spec, v_kind_name(v));
        sv = v_to_str(ev, v, 0, loc);
        if (prec >= 0 && (size_t)prec < sv->u.s.len) sv = v_str(ev, sv->u.s.s, (size_t)prec);
        if (!align) align = '<';
    } else {
        int is_float = v->kind == V_FLOAT;
        double f = is_float ? v->u.f : (double)v->u.i;
        char sg[2] = {0, 0};
        if (!v_is_num(v)) ev_fail(ev, loc, "format spec '%s' needs a number, got %s", spec, v_kind_name(v));
        if (v->kind == V_BOOL && !type) {
            sv = v_to_str(ev, v, 0, loc);
            goto pad;
        }
        if (sign == '+') sg[0] = '+';
        if (sign == ' ') sg[0] = ' ';
        switch (type) {
        case 0:
            if (is_float && prec < 0) {
                float_repr(f, num, sizeof num);
                if (sg[0] && f >= 0) { memmove(num + 1, num, strlen(num) + 1); num[0] = sg[0]; }
            } else if (is_float) {
                snprintf(num, sizeof num, "%s%.*g", sg, (int)(prec ? prec : 1), f);
            } else {
                snprintf(num, sizeof num, "%s%lld", sg, (long long)v->u.i);
            }
            break;
        case 'd': case 'x': case 'X': case 'o': case 'b':
            if (is_float) ev_fail(ev, loc, "format spec '%c' needs an integer, got a float", type);
            if (type == 'b') {
                unsigned long long u = (unsigned long long)(v->u.i < 0 ? -v->u.i : v->u.i);
                char bits[70];
                int nb = 0, k;
                do { bits[nb++] = (char)('0' + (u & 1)); u >>= 1; } while (u);
                k = snprintf(num, sizeof num, "%s%s", v->u.i < 0 ? "-" : sg, alt ? "0b" : "");
                while (nb > 0 && k + 1 < (int)sizeof num) num[k++] = bits[--nb];
                num[k] = '\0';
            } else {
                const char *fm = type == 'd' ? "%s%s%lld" : type == 'x' ? "%s%s%llx" : type == 'X' ? "%s%s%llX" : "%s%s%llo";
                long long a = v->u.i;
                const char *pre = !alt || type == 'd' ? "" : type == 'o' ? "0o" : type == 'x' ? "0x" : "0X";
                if (type != 'd' && a < 0) {
                    snprintf(num, sizeof num, fm, "-", pre, -a);
                } else {
                    snprintf(num, sizeof num, fm, sg, pre, a);
                }
            }
            break;
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': {
            char fm[16];
            snprintf(fm, sizeof fm, "%%s%%.%d%c", (int)(prec < 0 ? 6 : prec), type);
            snprintf(num, sizeof num, fm, sg, f);
            break;
        }
        case '%':
            snprintf(num, sizeof num, "%s%.*f%%", sg, (int)(prec < 0 ? 6 : prec), f * 100.0);
            break;
        default:
            ev_fail(ev, loc, "unknown format type '%c' in '%s'", type, spec);
        }
        if (comma) add_commas(num, sizeof num);
        sv = v_str(ev, num, strlen(num));
        if (!align) align = zero ? '=' : '>';
        if (zero && align == '=') fill = '0';
    }
pad:
    len = sv->u.s.len;
    if ((long)len >= width) return sv;
    pad = (size_t)width - len;
    if (align == '=') {
        /* padding after the sign */
        size_t s0 = (len && (sv->u.s.s[0] == '-' || sv->u.s.s[0] == '+' || sv->u.s.s[0] == ' ')) ? 1 : 0;
        sb_put(ev, &b, sv->u.s.s, s0);
        for (i = 0; i < pad; i++) sb_put(ev, &b, &fill, 1);
        sb_put(ev, &b, sv->u.s.s + s0, len - s0);
    } else {
        size_t left = align == '<' ? 0 : align == '^' ? pad / 2 : pad;
        for (i = 0; i < left; i++) sb_put(ev, &b, &fill, 1);
        sb_put(ev, &b, sv->u.s.s, len);
        for (i = left; i < pad; i++) sb_put(ev, &b, &fill, 1);
    }
    return v_str(ev, b.s, b.n);
}

/* f"..." */
value_t *v_fstring(ev_t *ev, ast_expr_t *e)
{
    sbuf_t b = {0};
    int i;
    for (i = 0; i < e->u.fstr.n; i++) {
        ast_expr_t *part = e->u.fstr.parts[i];
        value_t *v;
        if (!e->u.fstr.specs[i]) {
            sb_put(ev, &b, part->u.str.s, part->u.str.len);
            continue;
        }
        v = ev_eval(ev, part);
        if (v_is_rt(v))
            ev_fail(ev, part->loc, "an f-string is built at compile time; this value is only known at run time");
        if (e->u.fstr.convs[i] == 'r' || e->u.fstr.convs[i] == 'a') v = v_to_str(ev, v, 1, part->loc);
        else if (e->u.fstr.convs[i] == 's') v = v_to_str(ev, v, 0, part->loc);
        v = v_format(ev, v, e->u.fstr.specs[i], part->loc);
        sb_put(ev, &b, v->u.s.s, v->u.s.len);
    }
    return v_str(ev, b.s ? b.s : "", b.n);
}
