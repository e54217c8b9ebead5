/*
 * frontend/modules.c — the Python modules a tile program can import.
 *
 * Real TileLang files import more than `tilelang.language`: `math` and
 * `itertools` for constants and autotune spaces, `torch` for dtype names,
 * tilelang submodules (`tilelang.autotuner`, `tilelang.math`, the carver's
 * device driver, `tilelang.PassConfigKey` for pass_configs), and host-side
 * modules whose names the kernel never touches.  This file maps a dotted
 * module path to a value: a namespace tilec evaluates (members looked up
 * here or in builtins.c), or an *opaque* stand-in (V_OPAQUE) that carries
 * its dotted name.  Importing anything is accepted; using an opaque value
 * (calling it, computing with it) is the diagnostic, and it names the
 * construct, so an unused `import argparse` costs nothing and `torch.randn`
 * in a factory says exactly what is outside the subset.
 */
#include "eval_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Functions of host-side modules whose meaning a tile program can keep:
 * decorators that do not change the kernel, tilelang's fp8 type choice,
 * and the iket profiling marks (tilelang.tools.cuda.iket), which tilec
 * does not record. */
static const struct { const char *path; int id; } known_fns[] = {
    {"tilelang.transform.simplify_prim_func", BI_IDENTITY_DEC},
    {"bitblas.base.simplify_prim_func", BI_IDENTITY_DEC},   /* BitBLAS's spelling of the same decorator */
    {"tvm.testing.requires_package", BI_REQUIRES_PKG},
    {"tilelang.language.fp8.determine_fp8_type", BI_FP8_TYPE},
    {"tilelang.tools.cuda.iket.mark", BI_IKET_MARK},
    {"tilelang.tools.cuda.iket.range", BI_IKET_RANGE},
    {"tilelang.tools.cuda.iket.payload", BI_IKET_PAYLOAD},
    /* device probes of host helpers (an IsRDNA() or Hopper check): answered
     * for the fixed device of eval_internal.h, since one IR serves every backend */
    /* TileLang's (and BitBLAS's) MMA emitter, run at block level (mma_emitter.c) */
    {"tilelang.cuda.intrinsics.macro.mma_macro_generator.TensorCoreIntrinEmitter", BI_MMA_NEW},
    {"tilelang.intrinsics.mma_macro_generator.TensorCoreIntrinEmitter", BI_MMA_NEW},
    {"tilelang.intrinsics.TensorCoreIntrinEmitter", BI_MMA_NEW},
    {"bitblas.tl.mma_macro_generator.TensorCoreIntrinEmitter", BI_MMA_NEW},
    /* tilelang's 2:4 sparse-layout helpers (sparse.c) */
    {"tilelang.cuda.intrinsics.sparse_layout.get_e_factor", BI_SP_E_FACTOR},
    {"tilelang.cuda.intrinsics.sparse_layout.get_e_replicate_factor", BI_SP_E_REPL},
    {"tilelang.intrinsics.sparse_layout.get_e_factor", BI_SP_E_FACTOR},
    {"tilelang.intrinsics.sparse_layout.get_e_replicate_factor", BI_SP_E_REPL},
    {"tilelang.utils.sparse.get_e_factor", BI_SP_E_FACTOR},
    {"tilelang.utils.sparse.get_e_replicate_factor", BI_SP_E_REPL},
    {"torch.cuda.is_available", BI_DEV_AVAILABLE},
    {"torch.cuda.get_device_name", BI_DEV_NAME},
    {"torch.cuda.get_device_capability", BI_DEV_CAP},
    {"torch.cuda.get_device_properties", BI_DEV_PROPS},
    {"torch.cuda.device_count", BI_DEV_COUNT},
    {"torch.cuda.current_device", BI_DEV_CURRENT},
    {NULL, 0}
};

value_t *mod_opaque(ev_t *ev, const char *path)
{
    value_t *v;
    size_t n = strlen(path);
    char *c;
    int i;
    /* torch.version.hip is None: the probed device is not an AMD one */
    if (!strcmp(path, "torch.version.hip")) return ev->none;
    /* where TileLang defines the GEMM warp policy (T.GemmWarpPolicy re-exports it) */
    if (!strcmp(path, "tilelang.tileop.base.GemmWarpPolicy") || !strcmp(path, "tilelang.tileop.GemmWarpPolicy")) {
        v = v_new(ev, V_NS);
        v->u.ns = NS_POLICY;
        return v;
    }
    for (i = 0; known_fns[i].path; i++) {
        if (!strcmp(known_fns[i].path, path)) {
            v = v_new(ev, V_BUILTIN);
            v->u.bi.id = known_fns[i].id;
            return v;
        }
    }
    v = v_new(ev, V_OPAQUE);
    c = ev_alloc(ev, n + 1);
    memcpy(c, path, n + 1);
    v->u.opq = c;
    return v;
}

static value_t *ns(ev_t *ev, int id)
{
    value_t *v = v_new(ev, V_NS);
    v->u.ns = id;
    return v;
}

static const char *join(ev_t *ev, const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *c = ev_alloc(ev, na + nb + 2);
    memcpy(c, a, na);
    c[na] = '.';
    memcpy(c + na + 1, b, nb + 1);
    return c;
}

static const struct { const char *path; int ns; } known[] = {
    {"tilelang", NS_TILELANG}, {"tilelang.language", NS_T}, {"tilelang.language.tir", NS_T},
    {"tvm.tl.language", NS_T},   /* the old home of tilelang.language (BitBLAS-era files) */
    {"tilelang.math", NS_TL_MATH}, {"tilelang.autotuner", NS_AUTOTUNER},
    {"tilelang.carver.arch.driver", NS_DRIVER}, {"tilelang.carver.arch", NS_CARVER_ARCH},
    {"tilelang.carver", NS_CARVER}, {"math", NS_MATH}, {"itertools", NS_ITERTOOLS},
    {"torch", NS_TORCH}, {"tvm", NS_TVM}, {"tilelang.tvm", NS_TVM}, {"tvm.tirx", NS_TIRX}, {"tvm.tir", NS_TIRX},
    {"tilelang.tvm.tirx", NS_TIRX}, {"tilelang.tvm.tir", NS_TIRX}, {NULL, 0}
};

value_t *mod_lookup(ev_t *ev, const char *path)
{
    int i;
    for (i = 0; known[i].path; i++)
        if (!strcmp(known[i].path, path)) return ns(ev, known[i].ns);
    return mod_opaque(ev, path);
}

const char *mod_ns_name(int id)
{
    int i;
    if (id == NS_POLICY) return "T.GemmWarpPolicy";
    if (id == NS_PASSCFG) return "tilelang.PassConfigKey";
    for (i = 0; known[i].path; i++)
        if (known[i].ns == id) return id == NS_T ? "T" : known[i].path;
    return "module";
}

/* TileLang's PassConfigKey members are spelled TL_X / TIR_X for the option
 * strings "tl.x" / "tir.x". */
static value_t *pass_config_key(ev_t *ev, const char *name)
{
    char buf[160];
    const char *rest = name;
    size_t n = 0, i;
    if (!strncmp(name, "TL_", 3)) {
        rest = name + 3;
        n = (size_t)snprintf(buf, sizeof buf, "tl.");
    } else if (!strncmp(name, "TIR_", 4)) {
        rest = name + 4;
        n = (size_t)snprintf(buf, sizeof buf, "tir.");
    }
    for (i = 0; rest[i] && n + 1 < sizeof buf; i++)
        buf[n++] = (char)(rest[i] >= 'A' && rest[i] <= 'Z' ? rest[i] - 'A' + 'a' : rest[i]);
    buf[n] = '\0';
    return v_str(ev, buf, n);
}

static value_t *dtype_value(ev_t *ev, tilec_dtype_t t)
{
    value_t *v = v_new(ev, V_DTYPE);
    v->u.dt = t;
    return v;
}

static value_t *torch_member(ev_t *ev, const char *name)
{
    static const struct { const char *n; tilec_dtype_t t; } dts[] = {
        {"float16", TILEC_FLOAT16}, {"half", TILEC_FLOAT16}, {"bfloat16", TILEC_BFLOAT16},
        {"float32", TILEC_FLOAT32}, {"float", TILEC_FLOAT32}, {"float64", TILEC_FLOAT64},
        {"double", TILEC_FLOAT64}, {"int8", TILEC_INT8}, {"int16", TILEC_INT16}, {"short", TILEC_INT16},
        {"int32", TILEC_INT32}, {"int", TILEC_INT32}, {"int64", TILEC_INT64}, {"long", TILEC_INT64},
        {"uint8", TILEC_UINT8}, {"uint16", TILEC_UINT16}, {"uint32", TILEC_UINT32}, {"uint64", TILEC_UINT64},
        {"bool", TILEC_BOOL}, {"float8_e4m3fn", TILEC_FLOAT8_E4M3FN}, {"float8_e5m2", TILEC_FLOAT8_E5M2},
        {NULL, TILEC_BOOL}
    };
    int i;
    for (i = 0; dts[i].n; i++)
        if (!strcmp(dts[i].n, name)) return dtype_value(ev, dts[i].t);
    return mod_opaque(ev, join(ev, "torch", name));
}

static value_t *builtin(ev_t *ev, int id)
{
    value_t *v = v_new(ev, V_BUILTIN);
    v->u.bi.id = id;
    return v;
}

static const struct { const char *n; int id; } math_fns[] = {
    {"sqrt", BI_M_SQRT}, {"log", BI_M_LOG}, {"log2", BI_M_LOG2}, {"log10", BI_M_LOG10}, {"exp", BI_M_EXP},
    {"pow", BI_M_POW}, {"ceil", BI_M_CEIL}, {"floor", BI_M_FLOOR}, {"trunc", BI_M_TRUNC}, {"fabs", BI_M_FABS},
    {"gcd", BI_M_GCD}, {"lcm", BI_M_LCM}, {"isqrt", BI_M_ISQRT}, {"prod", BI_M_PROD}, {"log1p", BI_M_LOG1P},
    {"tanh", BI_M_TANH}, {"isclose", BI_M_ISCLOSE}, {"isinf", BI_M_ISINF}, {"isnan", BI_M_ISNAN},
    {NULL, 0}
};

/* Member `name` of namespace id; NULL when the namespace has no such
 * member (for T and the policy namespace, builtins.c answers first). */
value_t *mod_member(ev_t *ev, int id, const char *name)
{
    value_t *r;
    int i;
    switch (id) {
    case NS_PASSCFG: return pass_config_key(ev, name);
    case NS_TORCH: return torch_member(ev, name);
    case NS_MATH:
        if (!strcmp(name, "pi")) return v_float(ev, M_PI);
        if (!strcmp(name, "e")) return v_float(ev, M_E);
        if (!strcmp(name, "inf")) return v_float(ev, INFINITY);
        if (!strcmp(name, "tau")) return v_float(ev, 2 * M_PI);
        for (i = 0; math_fns[i].n; i++)
            if (!strcmp(math_fns[i].n, name)) return builtin(ev, math_fns[i].id);
        return NULL;
    case NS_ITERTOOLS:
        if (!strcmp(name, "product")) return builtin(ev, BI_PRODUCT);
        return NULL;
    case NS_TL_MATH:
        if (!strcmp(name, "next_power_of_2")) return builtin(ev, BI_NEXT_POW2);
        if (!strcmp(name, "cdiv")) return bi_lookup_ns(ev, NS_T, "ceildiv");
        return NULL;
    case NS_AUTOTUNER:
        if (!strcmp(name, "autotune")) return bi_lookup_ns(ev, NS_TILELANG, "autotune");
        return mod_opaque(ev, join(ev, "tilelang.autotuner", name));
    case NS_CARVER:
        if (!strcmp(name, "arch")) return ns(ev, NS_CARVER_ARCH);
        return mod_opaque(ev, join(ev, "tilelang.carver", name));
    case NS_CARVER_ARCH:
        if (!strcmp(name, "driver")) return ns(ev, NS_DRIVER);
        return mod_opaque(ev, join(ev, "tilelang.carver.arch", name));
    case NS_TVM:
        if (!strcmp(name, "tirx") || !strcmp(name, "tir")) return ns(ev, NS_TIRX);
        if (!strcmp(name, "DataType")) return bi_lookup_ns(ev, NS_T, "dtype");
        return mod_opaque(ev, join(ev, "tvm", name));
    case NS_TIRX:
        /* the TVM expressions kernels use, mapped to tile-IR ones */
        if (!strcmp(name, "const")) return builtin(ev, BI_TIRX_CONST);
        if (!strcmp(name, "Cast")) return bi_lookup_ns(ev, NS_T, "Cast");
        if (!strcmp(name, "PrimExpr") || !strcmp(name, "Var")) return mod_opaque(ev, join(ev, "tvm.tirx", name));
        r = bi_lookup_ns(ev, NS_T, name);   /* tirx.max, tirx.exp, ... are T's */
        return r ? r : mod_opaque(ev, join(ev, "tvm.tirx", name));
    case NS_DRIVER:
        if (!strcmp(name, "get_num_sms")) return builtin(ev, BI_NUM_SMS);
        return mod_opaque(ev, join(ev, "tilelang.carver.arch.driver", name));
    default:
        return NULL;
    }
}

/* ---- calls of the members above ------------------------------------------ */

static double want_num(ev_t *ev, value_t *v, ast_loc_t loc, const char *fn)
{
    if (v->kind == V_FLOAT) return v->u.f;
    if (v->kind == V_INT || v->kind == V_BOOL) return (double)v->u.i;
    ev_fail(ev, loc, "math.%s needs a compile-time number, got %s", fn, v_kind_name(v));
}

static value_t *to_int(ev_t *ev, double x, ast_loc_t loc, const char *fn)
{
    if (!(x > -9.2e18 && x < 9.2e18)) ev_fail(ev, loc, "math.%s: %g does not fit an integer", fn, x);
    return v_int(ev, (int64_t)x);
}

static int64_t gcd64(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* itertools.product(*iterables, repeat=1): a list of tuples. */
static value_t *product(ev_t *ev, args_t *ar)
{
    value_t **pools[16], *r;
    int npool[16], n = ar->n, rep = 1, i, j, k;
    int64_t total = 1, idx;
    for (j = 0; j < ar->nkw; j++) {
        if (strcmp(ar->kwn[j], "repeat")) ev_fail(ev, ar->kwloc[j], "itertools.product has no keyword '%s'", ar->kwn[j]);
        rep = (int)v_want_int(ev, ar->kwv[j], ar->kwloc[j], "repeat");
    }
    if (rep < 0 || n * rep > 16) ev_fail(ev, ar->at, "itertools.product of more than 16 sequences is not supported");
    for (i = 0; i < n * rep; i++) {
        value_t *s = v_iter_items(ev, ar->v[i % (n ? n : 1)], ar->loc[i % (n ? n : 1)]);
        pools[i] = s->u.seq.items;
        npool[i] = s->u.seq.n;
        total *= npool[i];
        if (total > EV_MAX_SEQ) ev_fail(ev, ar->at, "itertools.product is too large");
    }
    r = v_seq(ev, (int)total, 1);
    for (idx = 0; idx < total; idx++) {
        value_t *t = v_seq(ev, n * rep, 0);
        int64_t q = idx;
        for (k = n * rep - 1; k >= 0; k--) {
            t->u.seq.items[k] = pools[k][q % npool[k]];
            q /= npool[k];
        }
        r->u.seq.items[idx] = t;
    }
    return r;
}

/* torch.cuda's answers for the device of eval_internal.h: available, one of
 * it, its name, compute capability and properties (an object with .name,
 * .major, .minor, .multi_processor_count). */
static value_t *device_probe(ev_t *ev, int id, args_t *ar)
{
    static const char name[] = TILEC_FRONTEND_DEVICE_NAME;
    value_t *r;
    if (ar->n > 1 || ar->nkw > 1 || (id != BI_DEV_NAME && id != BI_DEV_CAP && id != BI_DEV_PROPS && (ar->n || ar->nkw)))
        ev_fail(ev, ar->at, "this torch.cuda probe takes %s", id == BI_DEV_NAME || id == BI_DEV_CAP || id == BI_DEV_PROPS
                ? "at most one device argument" : "no arguments");
    switch (id) {
    case BI_DEV_AVAILABLE: return ev->vtrue;
    case BI_DEV_COUNT: return v_int(ev, 1);
    case BI_DEV_CURRENT: return v_int(ev, 0);
    case BI_DEV_NAME: return v_str(ev, name, sizeof name - 1);
    case BI_DEV_CAP:
        r = v_seq(ev, 2, 0);
        r->u.seq.items[0] = v_int(ev, TILEC_FRONTEND_DEVICE_CC_MAJOR);
        r->u.seq.items[1] = v_int(ev, TILEC_FRONTEND_DEVICE_CC_MINOR);
        return r;
    default: {
        value_t *cls = v_new(ev, V_CLASS);
        cls->u.obj.name = "_CudaDeviceProperties";
        cls->u.obj.attrs = ev_env_new(ev, NULL);
        cls->u.obj.cls = NULL;
        r = v_new(ev, V_OBJECT);
        r->u.obj.name = cls->u.obj.name;
        r->u.obj.cls = cls;
        r->u.obj.attrs = ev_env_new(ev, NULL);
        env_set(ev, r->u.obj.attrs, "name", v_str(ev, name, sizeof name - 1));
        env_set(ev, r->u.obj.attrs, "major", v_int(ev, TILEC_FRONTEND_DEVICE_CC_MAJOR));
        env_set(ev, r->u.obj.attrs, "minor", v_int(ev, TILEC_FRONTEND_DEVICE_CC_MINOR));
        env_set(ev, r->u.obj.attrs, "multi_processor_count", v_int(ev, TILEC_FRONTEND_NUM_SMS));
        return r;
    }
    }
}

value_t *mod_call(ev_t *ev, int id, args_t *ar)
{
    ast_loc_t at = ar->at;
    const char *fn = "function";
    double x = 0, y = 0;
    int i;
    for (i = 0; math_fns[i].n; i++)
        if (math_fns[i].id == id) fn = math_fns[i].n;
    if (id == BI_PRODUCT) return product(ev, ar);
    if (id >= BI_DEV_AVAILABLE && id <= BI_DEV_CURRENT) return device_probe(ev, id, ar);
    if (id == BI_MMA_NEW) return mma_new(ev, ar);
    if (id == BI_SP_E_FACTOR || id == BI_SP_E_REPL) return sp_call(ev, id, ar);
    if (id == BI_REQUIRES_PKG) {   /* a test's skip marker: the kernel is compiled all the same */
        value_t *v = v_new(ev, V_BUILTIN);
        v->u.bi.id = BI_IDENTITY_DEC;
        return v;
    }
    if (id == BI_IDENTITY_DEC) {
        if (ar->n != 1 || ar->v[0]->kind != V_FUNC) ev_fail(ev, at, "simplify_prim_func is a decorator");
        return ar->v[0];
    }
    if (id == BI_FP8_TYPE) {
        /* determine_fp8_type(fp8_type="e4m3"): the NVIDIA answer (the frontend does not see the device;
         * AMD's fnuz variants are not in the IR) */
        value_t *v = v_new(ev, V_DTYPE);
        const char *k = "e4m3";
        if (ar->n > 1 || ar->nkw > 1) ev_fail(ev, at, "determine_fp8_type(fp8_type=\"e4m3\") takes one argument");
        if (ar->n == 1 || ar->nkw == 1) {
            value_t *a = ar->n ? ar->v[0] : ar->kwv[0];
            if (a->kind != V_STR) ev_fail(ev, at, "determine_fp8_type: fp8_type is \"e4m3\" or \"e5m2\"");
            k = a->u.s.s;
        }
        if (!strcmp(k, "e4m3")) v->u.dt = TILEC_FLOAT8_E4M3FN;
        else if (!strcmp(k, "e5m2")) v->u.dt = TILEC_FLOAT8_E5M2;
        else ev_fail(ev, at, "determine_fp8_type: fp8_type is \"e4m3\" or \"e5m2\", not \"%s\"", k);
        return v;
    }
    if (id == BI_IKET_MARK || id == BI_IKET_PAYLOAD) return ev->none;   /* profiling marks: not recorded */
    if (id == BI_IKET_RANGE) return v_new(ev, V_WSCOPE);               /* a region: its body runs where written */
    if (id == BI_TIRX_CONST) {
        tilec_dtype_t t;
        if (ar->n < 1 || ar->n > 2 || !v_is_num(ar->v[0])) ev_fail(ev, at, "tirx.const(value, dtype) needs a compile-time number");
        if (ar->n == 1) return ar->v[0];
        t = v_want_dtype(ev, ar->v[1], ar->loc[1]);
        return v_cast(ev, v_expr(ev, ex_as(ev, ar->v[0], t, at)), t, at);
    }
    if (id == BI_NUM_SMS) {
        if (ar->n || ar->nkw) ev_fail(ev, at, "get_num_sms() takes no arguments");
        return v_int(ev, TILEC_FRONTEND_NUM_SMS);
    }
    if (id == BI_NEXT_POW2) {
        int64_t v, p = 1;
        if (ar->n != 1 || ar->nkw) ev_fail(ev, at, "next_power_of_2() takes one argument");
        v = v_want_int(ev, ar->v[0], ar->loc[0], "next_power_of_2's argument");
        while (p < v && p < ((int64_t)1 << 62)) p <<= 1;
        return v_int(ev, p);
    }
    if (id == BI_M_PROD) {
        value_t *s, *r = v_int(ev, 1);
        if (ar->n != 1) ev_fail(ev, at, "math.prod takes one sequence");
        s = v_iter_items(ev, ar->v[0], ar->loc[0]);
        for (i = 0; i < s->u.seq.n; i++) r = v_binop(ev, '*', r, s->u.seq.items[i], at);
        return r;
    }
    if (id == BI_M_GCD || id == BI_M_LCM) {
        int64_t g = 0, l = 1;
        for (i = 0; i < ar->n; i++) {
            int64_t a = v_want_int(ev, ar->v[i], ar->loc[i], "a math.gcd/lcm argument");
            g = gcd64(g, a);
            if (id == BI_M_LCM) l = (a == 0 || l == 0) ? 0 : l / gcd64(l, a) * (a < 0 ? -a : a);
        }
        return v_int(ev, id == BI_M_GCD ? g : l);
    }
    if (ar->nkw && id != BI_M_ISCLOSE) ev_fail(ev, at, "math.%s takes no keyword arguments", fn);
    if (ar->n < 1) ev_fail(ev, at, "math.%s needs an argument", fn);
    if (v_is_rt(ar->v[0]))
        ev_fail(ev, ar->loc[0], "math.%s works on compile-time numbers; use T.%s on run-time values", fn, fn);
    x = want_num(ev, ar->v[0], ar->loc[0], fn);
    if ((id == BI_M_POW || id == BI_M_ISCLOSE || (id == BI_M_LOG && ar->n == 2)) && ar->n >= 2)
        y = want_num(ev, ar->v[1], ar->loc[1], fn);
    else if (id == BI_M_POW || id == BI_M_ISCLOSE)
        ev_fail(ev, at, "math.%s takes two arguments", fn);
    switch (id) {
    case BI_M_SQRT:
        if (x < 0) ev_fail(ev, at, "math domain error (sqrt of %g)", x);
        return v_float(ev, sqrt(x));
    case BI_M_LOG:
        if (x <= 0 || (ar->n == 2 && (y <= 0 || y == 1))) ev_fail(ev, at, "math domain error (log)");
        return v_float(ev, ar->n == 2 ? log(x) / log(y) : log(x));
    case BI_M_LOG2:
        if (x <= 0) ev_fail(ev, at, "math domain error (log2 of %g)", x);
        return v_float(ev, log2(x));
    case BI_M_LOG10:
        if (x <= 0) ev_fail(ev, at, "math domain error (log10 of %g)", x);
        return v_float(ev, log10(x));
    case BI_M_LOG1P:
        if (x <= -1) ev_fail(ev, at, "math domain error (log1p of %g)", x);
        return v_float(ev, log1p(x));
    case BI_M_EXP: return v_float(ev, exp(x));
    case BI_M_TANH: return v_float(ev, tanh(x));
    case BI_M_POW: return v_float(ev, pow(x, y));
    case BI_M_FABS: return v_float(ev, fabs(x));
    case BI_M_CEIL: return ar->v[0]->kind == V_FLOAT ? to_int(ev, ceil(x), at, fn) : ar->v[0];
    case BI_M_FLOOR: return ar->v[0]->kind == V_FLOAT ? to_int(ev, floor(x), at, fn) : ar->v[0];
    case BI_M_TRUNC: return ar->v[0]->kind == V_FLOAT ? to_int(ev, trunc(x), at, fn) : ar->v[0];
    case BI_M_ISQRT: {
        int64_t v = v_want_int(ev, ar->v[0], ar->loc[0], "math.isqrt's argument"), r;
        if (v < 0) ev_fail(ev, at, "math.isqrt of a negative number");
        r = (int64_t)sqrt((double)v);
        while (r > 0 && r * r > v) r--;
        while ((r + 1) * (r + 1) <= v) r++;
        return v_int(ev, r);
    }
    case BI_M_ISINF: return v_bool(ev, isinf(x));
    case BI_M_ISNAN: return v_bool(ev, isnan(x));
    case BI_M_ISCLOSE: {
        double rt = 1e-9, atol = 0;
        for (i = 0; i < ar->nkw; i++) {
            if (!strcmp(ar->kwn[i], "rel_tol")) rt = want_num(ev, ar->kwv[i], ar->kwloc[i], fn);
            else if (!strcmp(ar->kwn[i], "abs_tol")) atol = want_num(ev, ar->kwv[i], ar->kwloc[i], fn);
            else ev_fail(ev, ar->kwloc[i], "math.isclose has no keyword '%s'", ar->kwn[i]);
        }
        return v_bool(ev, fabs(x - y) <= fmax(rt * fmax(fabs(x), fabs(y)), atol));
    }
    default: break;
    }
    ev_fail(ev, at, "unsupported module function");
}
