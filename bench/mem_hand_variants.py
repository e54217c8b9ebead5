#!/usr/bin/env python3
"""mem_hand_variants.py -- hand variants of a printed row-kernel source
(rmsnorm, softmax, layernorm: `tilec compile ... --emit source`), for
TILEC_CUDA_SOURCE (docs/backend-cuda.md, "Studying a kernel by hand").

  mem_hand_variants.py IN.cu OUTDIR [GRID]   writes OUTDIR/<stem>_<v>.cu for v in
    h1  the register copies' 16-byte global loads as ld.global.nc.L1::no_allocate,
        their stores as st.global.cs
    ld  the loads only; st  the stores only
    ef  loads and stores with an L2 evict_first policy (createpolicy + .L2::cache_hint)
    wg  (a kernel staging 1-D fp16 vectors whole in shared memory: rmsnorm's
        weight, layernorm's weight and bias) no staging: each lane reads the
        8 elements of its 8 columns as one 16-byte __ldg where it uses them
        (no copy W -> w, no __syncthreads); wg3 the same with
        __launch_bounds__(threads, 3)
    psK, K = 2, 3 (with GRID, the printed grid's block count) persistent: 132*K blocks
        loop over the GRID block indices (the launch keeps GRID blocks; the
        others exit at once), the shared vectors copied once before the loop

Session 13 (bench/results/gpumem_session13.md): h1/ld/st/ef measured slower
than the printed source on the H200; wg written, not yet timed.
"""
import os
import re
import sys

HELPERS = r'''TL_INLINE uint4 tl_ld_na(const void *p) { uint4 v; asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p)); return v; }
TL_INLINE uint4 tl_ld_ef(const void *p) { uint4 v; asm("{ .reg .b64 pol; createpolicy.fractional.L2::evict_first.b64 pol, 1.0; ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], pol; }" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p)); return v; }
TL_INLINE void tl_st_cs(void *p, uint4 v) { asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory"); }
TL_INLINE void tl_st_ef(void *p, uint4 v) { asm volatile("{ .reg .b64 pol; createpolicy.fractional.L2::evict_first.b64 pol, 1.0; st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, pol; }" :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory"); }
'''
LOAD = re.compile(r"\*\(tl_vec<tl_u16, 8> \*\)\((b[0-9]+)\) = \*\(const tl_vec<tl_u16, 8> \*\)\(tc_vp\);")
STORE = re.compile(r"\*\(tl_vec<tl_u16, 8> \*\)\(tc_vp\) = \*\(const tl_vec<tl_u16, 8> \*\)\((b[0-9]+)\);")


def hinted(src, ld, st):
    src = src.replace("#define TL_INLINE static __device__ __forceinline__\n",
                      "#define TL_INLINE static __device__ __forceinline__\n" + HELPERS, 1)
    if ld:
        src, n = LOAD.subn(lambda m: f"*(uint4 *)({m.group(1)}) = {ld}(tc_vp);", src)
        assert n, "no vector load found"
    if st:
        src, n = STORE.subn(lambda m: f"{st}(tc_vp, *(const uint4 *)({m.group(1)}));", src)
        assert n, "no vector store found"
    return src


def weight_global(src):
    """Each dense shared 1-D fp16 vector staged whole from a global tensor
    (rmsnorm's w, layernorm's w and b) read from the global tensor instead:
    one 16-byte __ldg per 8 consecutive registers where they are scaled."""
    staged = re.findall(r"tl_u16 \*const (b[0-9]+) = \(tl_u16 \*\)\(tc_smem \+ [0-9]+\); /\* shared (\w+), dense \*/", src)
    assert staged, "no staged shared vector"
    glob = {}
    for sb, name in staged:
        a = re.search(r"\n  \{ /\* copy \w+ -> " + name + r" \*/\n", src).start() + 1
        b = re.compile(r"\n  (\{ /\*|__syncthreads)").search(src, a).start() + 1
        m = re.search(r"= \*\(const tl_vec<tl_u16, 8> \*\)\(\((b[0-9]+) \+ ", src[a:b])
        assert m, name
        glob[sb] = m.group(1)
        src = src[:a] + src[b:]
    assert src.count("  __syncthreads();\n") == 1, "more than one barrier"
    src = src.replace("  __syncthreads();\n", "".join(f"  uint4 tc_g{sb} = make_uint4(0, 0, 0, 0);\n" for sb in glob), 1)
    comp = "xyzw"

    def reg(mm):
        r, consts, body = int(mm.group(1)), mm.group(2), mm.group(3)
        for sb, gb in glob.items():
            for v in re.findall(r"tl_h2f\(" + sb + r"\[\(int\)\((v[0-9]+)\)\]\)", body):
                if r % 8 == 0 and f"tc_g{sb} = __ldg" not in consts:
                    consts += f"      tc_g{sb} = __ldg((const uint4 *)({gb} + {v}));\n"
                body = body.replace(f"tl_h2f({sb}[(int)({v})])",
                                    f"tl_h2f(((tl_u16)(tc_g{sb}.{comp[(r % 8) // 2]} >> {16 * (r % 2)})))")
        return f"    {{ /* x register {r} */\n{consts}{body}"

    src = re.sub(r"    \{ /\* x register ([0-9]+) \*/\n((?:      const int v[0-9]+ = [^\n]*\n)+)(      b[0-9]+_[0-9]+ = [^\n]*\n)",
                 reg, src)
    for sb in glob:
        assert f"{sb}[" not in src, f"{sb} still read"
    return src


def persistent(src, blocks, slots):
    """The printed grid's first `slots` blocks loop over its `blocks` block
    indices (v0 = blockIdx.x, + slots, ...); the rest exit at once.  The
    whole-vector copies into shared memory (W -> w) move before the loop,
    and the loop ends with a barrier, so that no thread reads the next
    row group's data into shared memory while another reads the last."""
    decl = "  const int v0 = (int)(blockIdx.x); /* bx */\n"
    assert src.count(decl) == 1, "no bx"
    hoisted = ""
    for name in re.findall(r"/\* shared (\w+), dense \*/", src):
        a = re.search(r"\n  \{ /\* copy \w+ -> " + name + r" \*/\n", src).start() + 1
        b = re.compile(r"\n  (\{ /\*|__syncthreads)").search(src, a).start() + 1
        hoisted += src[a:b]
        src = src[:a] + src[b:]
    head, body = src.split(decl)
    ptrs = "".join(re.findall(r"  [^\n]* = \([^\n]*\)\(tc_smem \+ [0-9]+\); /\* shared \w+, dense \*/\n", body))
    for line in ptrs.splitlines(keepends=True):
        body = body.replace(line, "", 1)
    head += ptrs
    body = body.rstrip()
    assert body.endswith("}")
    body = body[:-1]
    return (head + f"  if (blockIdx.x >= {slots}) return;\n" + hoisted +
            (f"  __syncthreads();\n" if hoisted else "") +
            f"  for (int v0 = (int)(blockIdx.x); v0 < {blocks}; v0 += {slots}) {{ /* bx */\n" +
            body + "  __syncthreads();\n  }\n}\n")


def main():
    src = open(sys.argv[1]).read()
    out = sys.argv[2]
    grid = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    stem = os.path.splitext(os.path.basename(sys.argv[1]))[0]
    os.makedirs(out, exist_ok=True)
    vs = dict(h1=hinted(src, "tl_ld_na", "tl_st_cs"), ld=hinted(src, "tl_ld_na", None),
              st=hinted(src, None, "tl_st_cs"), ef=hinted(src, "tl_ld_ef", "tl_st_ef"))
    if re.search(r"/\* shared \w+, dense \*/", src):
        vs["wg"] = weight_global(src)
        # layernorm's: ptxas hoists all 32 weight and bias loads (254 registers, 2 blocks an SM);
        # at least 3 blocks an SM keeps the printed kernel's occupancy (20 bytes of spills)
        vs["wg3"] = re.sub(r"__launch_bounds__\(([0-9]+)\)", r"__launch_bounds__(\1, 3)", vs["wg"], count=1)
    if grid:  # persistent: 132 SMs x 2 and 3 blocks an SM (3 fit at 160-168 registers)
        for k in (2, 3):
            vs[f"ps{k}"] = persistent(src, grid, 132 * k)
    for v, s in vs.items():
        with open(os.path.join(out, f"{stem}_{v}.cu"), "w") as f:
            f.write(s)


if __name__ == "__main__":
    main()
