#!/usr/bin/env python3
"""tests/diff/gen.py — random valid tile programs for differential testing.

Each seed gives one program of the core set (docs/language.md): copies
between scopes, element-wise expressions over two operands, GEMM (every
transpose, pipelined, ragged), the five reductions along either dimension,
cumsum (both directions, in place or not), atomics into global memory, and a
software-pipelined accumulation.  Sizes are drawn so that most programs are
ragged (a tensor edge inside a tile), dtypes from all of them where the
operation takes them.  The program carries every value as a factory default,
so `tilec run FILE --check --backend B` runs it with the interpreter as the
reference; tests/diff/run.sh does that per backend and keeps what fails.

Deterministic: the same seed gives the same text on any machine (Python's
random.Random with an integer seed is stable across versions).

Usage: gen.py SEED [-o FILE]      (prints the program, kind on stderr)
       gen.py --kinds             (the kinds, one a line)
"""
import random
import sys

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"]
BLOCKS = [8, 16, 32, 64]
THREADS = [32, 64, 128, 256]

HEADER = "import tilelang\nimport tilelang.language as T\n\n\n"


def ragged(r, block, tiles_max=3):
    """A size near a multiple of block: often off by a few, sometimes exact."""
    t = r.randint(1, tiles_max)
    n = t * block + r.choice([0, -1, -3, 1, 5, -block // 2])
    return max(1, n)


def float_expr(r, a, b, depth=0):
    """A float expression over a and b (values in [-1, 1])."""
    leaves = [a, b, "%.3g" % r.uniform(-2, 2)]
    if depth >= 2 or r.random() < 0.3:
        return r.choice(leaves)
    x = float_expr(r, a, b, depth + 1)
    y = float_expr(r, a, b, depth + 1)
    return r.choice([
        "(%s + %s)" % (x, y),
        "(%s - %s)" % (x, y),
        "(%s * %s)" % (x, y),
        "T.max(%s, %s)" % (x, y),
        "T.min(%s, %s)" % (x, y),
        "T.abs(%s)" % x,
        "T.exp(T.min(%s, 4.0))" % x,
        "T.sqrt(T.abs(%s))" % x,
        "T.tanh(%s)" % x,
        "T.sigmoid(%s)" % x,
        "(%s / (T.abs(%s) + 1.0))" % (x, y),
        "T.if_then_else(%s > %s, %s, %s)" % (x, y, y, x),
    ])


def int_expr(r, a, b, depth=0):
    """An integer expression over a and b (values in [-64, 64]); no division
    (a zero divisor has no defined result to compare)."""
    leaves = [a, b, str(r.randint(-9, 9))]
    if depth >= 2 or r.random() < 0.3:
        return r.choice(leaves)
    x = int_expr(r, a, b, depth + 1)
    y = int_expr(r, a, b, depth + 1)
    return r.choice([
        "(%s + %s)" % (x, y),
        "(%s - %s)" % (x, y),
        "(%s * %s)" % (x, y),
        "T.max(%s, %s)" % (x, y),
        "T.min(%s, %s)" % (x, y),
        "T.if_then_else(%s < %s, %s, %s)" % (x, y, x, y),
    ])


def factory(name, params, body):
    ps = ", ".join("%s=%r" % kv for kv in params)
    return HEADER + "def %s(%s):\n%s\n    return main\n" % (name, ps, body)


def gen_copy(r):
    dtype = r.choice(FLOATS + INTS)
    bm, bn = r.choice(BLOCKS), r.choice(BLOCKS)
    m, n = ragged(r, bm), ragged(r, bn)
    scopes = r.choice([["shared"], ["fragment"], ["shared", "fragment"], ["fragment", "shared"]])
    sliced = r.random() < 0.5
    src = ("A[by * bM:(by + 1) * bM, bx * bN:(bx + 1) * bN]" if sliced
           else "A[by * bM, bx * bN]")
    lines = []
    prev = src
    for i, s in enumerate(scopes):
        lines.append("            S%d = T.alloc_%s((bM, bN), dtype)" % (i, s))
    for i in range(len(scopes)):
        lines.append("            T.copy(%s, S%d)" % (prev, i))
        prev = "S%d" % i
    lines.append("            T.copy(%s, B[by * bM, bx * bN])" % prev)
    body = ("    @T.prim_func\n"
            "    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):\n"
            "        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=%d) as (bx, by):\n"
            % r.choice(THREADS)) + "\n".join(lines)
    return factory("copy", [("M", m), ("N", n), ("bM", bm), ("bN", bn), ("dtype", dtype)], body)


def gen_elementwise(r):
    isf = r.random() < 0.6
    dtype = r.choice(FLOATS if isf else INTS)
    out = dtype if r.random() < 0.7 else r.choice(FLOATS if isf else INTS)
    bm, bn = r.choice(BLOCKS), r.choice(BLOCKS)
    m, n = ragged(r, bm), ragged(r, bn)
    ex = float_expr if isf else int_expr
    direct = r.random() < 0.4
    if direct:
        # direct global loads and stores, guarded at the ragged edge
        e = ex(r, "A[by * bM + i, bx * bN + j]", "B[by * bM + i, bx * bN + j]")
        lines = ["            for i, j in T.Parallel(bM, bN):",
                 "                C[by * bM + i, bx * bN + j] = T.cast(%s, out_dtype)" % e]
    else:
        e = ex(r, "fa[i, j]", "fb[i, j]")
        lines = ["            fa = T.alloc_fragment((bM, bN), dtype)",
                 "            fb = T.alloc_%s((bM, bN), dtype)" % r.choice(["fragment", "shared"]),
                 "            fc = T.alloc_fragment((bM, bN), out_dtype)",
                 "            T.copy(A[by * bM, bx * bN], fa)",
                 "            T.copy(B[by * bM, bx * bN], fb)",
                 "            for i, j in T.Parallel(bM, bN):",
                 "                fc[i, j] = T.cast(%s, out_dtype)" % e,
                 "            T.copy(fc, C[by * bM, bx * bN])"]
    body = ("    @T.prim_func\n"
            "    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype),\n"
            "             C: T.Tensor((M, N), out_dtype)):\n"
            "        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=%d) as (bx, by):\n"
            % r.choice(THREADS)) + "\n".join(lines)
    return factory("elementwise", [("M", m), ("N", n), ("bM", bm), ("bN", bn), ("dtype", dtype),
                                   ("out_dtype", out)], body)


def gen_gemm(r):
    kind = r.choice(["f16", "f16", "bf16", "f32", "i8"])
    dtype, accum = {"f16": ("float16", "float32"), "bf16": ("bfloat16", "float32"),
                    "f32": ("float32", "float32"), "i8": ("int8", "int32")}[kind]
    out = r.choice([accum, dtype]) if kind != "i8" else "int32"
    bm, bn, bk = r.choice([16, 32, 64]), r.choice([16, 32, 64]), r.choice([8, 16, 32])
    m, n, k = ragged(r, bm, 2), ragged(r, bn, 2), ragged(r, bk, 4)
    ta, tb = r.random() < 0.3, r.random() < 0.5
    stages = r.choice([1, 2, 3])
    a_shape = "(K, M)" if ta else "(M, K)"
    b_shape = "(N, K)" if tb else "(K, N)"
    as_shape = "(bK, bM)" if ta else "(bM, bK)"
    bs_shape = "(bN, bK)" if tb else "(bK, bN)"
    a_at = "A[k * bK, by * bM]" if ta else "A[by * bM, k * bK]"
    b_at = "B[bx * bN, k * bK]" if tb else "B[k * bK, bx * bN]"
    loop = ("T.Pipelined(T.ceildiv(K, bK), num_stages=%d)" % stages if r.random() < 0.7
            else "T.serial(T.ceildiv(K, bK))")
    c_scope = "fragment"
    body = ("    @T.prim_func\n"
            "    def main(A: T.Tensor(%s, dtype), B: T.Tensor(%s, dtype), C: T.Tensor((M, N), out_dtype)):\n"
            "        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=%d) as (bx, by):\n"
            "            A_s = T.alloc_shared(%s, dtype)\n"
            "            B_s = T.alloc_shared(%s, dtype)\n"
            "            C_l = T.alloc_%s((bM, bN), accum_dtype)\n"
            "            T.clear(C_l)\n"
            "            for k in %s:\n"
            "                T.copy(%s, A_s)\n"
            "                T.copy(%s, B_s)\n"
            "                T.gemm(A_s, B_s, C_l, transpose_A=%s, transpose_B=%s)\n"
            "            T.copy(C_l, C[by * bM, bx * bN])"
            % (a_shape, b_shape, r.choice([64, 128, 256]), as_shape, bs_shape, c_scope, loop,
               a_at, b_at, ta, tb))
    return factory("gemm", [("M", m), ("N", n), ("K", k), ("bM", bm), ("bN", bn), ("bK", bk),
                            ("dtype", dtype), ("accum_dtype", accum), ("out_dtype", out)], body)


def gen_reduce(r):
    op = r.choice(["max", "min", "sum", "abssum", "absmax"])
    dtype = r.choice(FLOATS + ["int32", "int64", "int16"])
    dim = r.choice([0, 1])
    bm, bn = r.choice(BLOCKS), r.choice(BLOCKS)
    # the reduced dimension fits one tile (its padding reads zeros, on
    # every backend and in the interpreter alike)
    if dim == 1:
        m, n = ragged(r, bm), r.randint(1, bn)
        grid, acc, red = "T.ceildiv(M, bM)", "(bM,)", "R[bx * bM]"
        src, rshape = "X[bx * bM, 0]", "(M,)"
    else:
        m, n = r.randint(1, bm), ragged(r, bn)
        grid, acc, red = "T.ceildiv(N, bN)", "(bN,)", "R[bx * bN]"
        src, rshape = "X[0, bx * bN]", "(N,)"
    clear = r.random() < 0.7
    pre = "" if clear else "            T.copy(%s, acc)\n" % red
    scope = r.choice(["fragment", "shared"])
    body = ("    @T.prim_func\n"
            "    def main(X: T.Tensor((M, N), dtype), R: T.Tensor(%s, dtype)):\n"
            "        with T.Kernel(%s, threads=%d) as bx:\n"
            "            tile = T.alloc_%s((bM, bN), dtype)\n"
            "            acc = T.alloc_fragment(%s, dtype)\n"
            "            T.copy(%s, tile)\n%s"
            "            T.reduce_%s(tile, acc, dim=%d, clear=%s)\n"
            "            T.copy(acc, %s)"
            % (rshape, grid, r.choice(THREADS), scope, acc, src, pre, op, dim, clear, red))
    return factory("reduce_" + op, [("M", m), ("N", n), ("bM", bm), ("bN", bn), ("dtype", dtype)], body)


def gen_cumsum(r):
    dtype = r.choice(["float32", "float64", "float16", "int32", "int64"])
    dim = r.choice([0, 1])
    rev = r.random() < 0.5
    bm, bn = r.choice(BLOCKS), r.choice(BLOCKS)
    m, n = ragged(r, bm), ragged(r, bn)
    inplace = r.random() < 0.4
    scope = r.choice(["shared", "fragment"])
    if inplace:
        scan = ("            T.cumsum(src, dim=%d, reverse=%s)\n"
                "            T.copy(src, Y[by * bM, bx * bN])" % (dim, rev))
        dst = ""
    else:
        dst = "            dst = T.alloc_%s((bM, bN), dtype)\n" % scope
        scan = ("            T.cumsum(src, dst, dim=%d, reverse=%s)\n"
                "            T.copy(dst, Y[by * bM, bx * bN])" % (dim, rev))
    body = ("    @T.prim_func\n"
            "    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):\n"
            "        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=%d) as (bx, by):\n"
            "            src = T.alloc_%s((bM, bN), dtype)\n%s"
            "            T.copy(X[by * bM, bx * bN], src)\n%s"
            % (r.choice(THREADS), scope, dst, scan))
    return factory("cumsum", [("M", m), ("N", n), ("bM", bm), ("bN", bn), ("dtype", dtype)], body)


def gen_atomic(r):
    op = r.choice(["add", "max", "min"])
    # float atomic_add sums in any order: float32 keeps it within 1e-4
    dtype = r.choice(["float32", "int32", "int64"] if op == "add" else ["float32", "int32", "float16"])
    bm, bn = r.choice(BLOCKS), r.choice(BLOCKS)
    m, n = ragged(r, bm), ragged(r, bn)
    if r.random() < 0.5:
        # tile form: a column reduction per block, atomically combined
        red = "sum" if op == "add" else op
        body = ("    @T.prim_func\n"
                "    def main(A: T.Tensor((M, N), dtype), Out: T.Tensor((N,), dtype)):\n"
                "        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=%d) as (bx, by):\n"
                "            tile = T.alloc_fragment((bM, bN), dtype)\n"
                "            part = T.alloc_fragment((bN,), dtype)\n"
                "            T.copy(A[by * bM, bx * bN], tile)\n"
                "            T.reduce_%s(tile, part, dim=0)\n"
                "            T.atomic_%s(Out[bx * bN], part)"
                % (r.choice(THREADS), red, op))
    else:
        # element form: every element lands in one of a few bins
        bins = r.randint(1, 7)
        body = ("    @T.prim_func\n"
                "    def main(A: T.Tensor((M, N), dtype), Out: T.Tensor((%d,), dtype)):\n"
                "        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=%d) as (bx, by):\n"
                "            for i, j in T.Parallel(bM, bN):\n"
                "                if by * bM + i < M and bx * bN + j < N:\n"
                "                    T.atomic_%s(Out[(by * bM + i + j) %% %d], A[by * bM + i, bx * bN + j])"
                % (bins, r.choice(THREADS), op, bins))
    return factory("atomic_" + op, [("M", m), ("N", n), ("bM", bm), ("bN", bn), ("dtype", dtype)], body)


def gen_pipeline(r):
    dtype = r.choice(["float16", "float32", "bfloat16"])
    bm, bk = r.choice(BLOCKS), r.choice(BLOCKS)
    m, k = ragged(r, bm), ragged(r, bk, 5)
    stages = r.choice([1, 2, 3, 4])
    e = float_expr(r, "a_s[i, kk]", "acc[i]", 1)
    body = ("    @T.prim_func\n"
            "    def main(A: T.Tensor((M, K), dtype), S: T.Tensor((M,), \"float32\")):\n"
            "        with T.Kernel(T.ceildiv(M, bM), threads=%d) as bx:\n"
            "            a_s = T.alloc_shared((bM, bK), dtype)\n"
            "            acc = T.alloc_fragment((bM,), \"float32\")\n"
            "            T.clear(acc)\n"
            "            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=%d):\n"
            "                T.copy(A[bx * bM, k * bK], a_s)\n"
            "                for i in T.Parallel(bM):\n"
            "                    for kk in T.serial(bK):\n"
            "                        acc[i] = acc[i] + T.cast(%s, \"float32\") * 0.125\n"
            "            T.copy(acc, S[bx * bM])"
            % (r.choice(THREADS), stages, e))
    return factory("pipeline", [("M", m), ("K", k), ("bM", bm), ("bK", bk), ("dtype", dtype)], body)


KINDS = {
    "copy": gen_copy,
    "elementwise": gen_elementwise,
    "gemm": gen_gemm,
    "reduce": gen_reduce,
    "cumsum": gen_cumsum,
    "atomic": gen_atomic,
    "pipeline": gen_pipeline,
}


def generate(seed):
    r = random.Random(seed)
    names = sorted(KINDS)
    kind = names[seed % len(names)]   # every kind in every run of len(names) seeds
    text = KINDS[kind](r)
    return kind, "# tests/diff/gen.py seed %d (%s)\n" % (seed, kind) + text


def main(argv):
    if argv[1:2] == ["--kinds"]:
        print("\n".join(sorted(KINDS)))
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    seed = int(argv[1])
    kind, text = generate(seed)
    if len(argv) >= 4 and argv[2] == "-o":
        with open(argv[3], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    print(kind, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
