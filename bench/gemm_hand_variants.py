#!/usr/bin/env python3
# bench/gemm_hand_variants.py — hand variants of the printed wgmma GEMM for TILEC_CUDA_SOURCE (session 12,
# issue 17: which of TileLang's differences pay; bench/results/gemm_session12.md). A study tool, not a build step.
"""gemm_hand_variants.py SRC DST FLAGS M N BM BN: hand variants of tilec's printed wgmma GEMM (session 12 study).
FLAGS letters:
  D  descriptors: one tl_desc of the buffer's base (loop-invariant), offsets added as 64-bit integers
  E  full tiles store unguarded (one test per tile), ragged tiles keep the printed guarded stores
  R  (warp-specialized) wgmma.wait_group 0 each k-step, release this k-step's stage at once
  N  (warp-specialized) setmaxnreg 24/240, __launch_bounds__(384, 1)
  M  (plain ring) the refill waits on an empty mbarrier (one arrival per warp) instead of __syncthreads
"""
import re, sys

src, dst, flags, M, N, BM, BN = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:8])
s = open(src).read()
n_sub = {}

def sub(pat, rep, text, name, count=0, flags_=0):
    out, n = re.subn(pat, rep, text, count=count, flags=flags_)
    if n == 0:
        sys.exit(f"gemm_hand_variants.py: {name}: no match in {src}")
    n_sub[name] = n_sub.get(name, 0) + n
    return out

if "D" in flags:
    helper = ("TL_INLINE tl_u64 tl_desc_at(tl_u64 d0, tl_u32 bytes) { return d0 + (tl_u64)(bytes >> 4); }\n")
    s = sub(r"(TL_INLINE void tl_wg_fence\(void\))", helper + r"\1", s, "D-helper", count=1)
    pat = (r"tl_desc\(tl_sa\(&(b\d+)\[(.*?)\]\) \+ (\d+)u \* \(tl_u32\)\((.*)\), (\d+u), (\d+u), (\d)\);")
    rep = (r"tl_desc_at(tl_desc(tl_sa(\1), \5, \6, \7), \3u * ((tl_u32)(\2) + (tl_u32)(\4)));")
    s = sub(pat, rep, s, "D")

if "R" in flags:
    i = s.index("/* the consumers: wgmma on what lands */")
    head, tail = s[:i], s[i:]
    tail = sub(r"tl_wg_wait<1>\(\);", "tl_wg_wait<0>();", tail, "R-wait", count=1)
    j = tail.index("tl_mbar_arrive(")
    k = tail.rindex("if (((v2) >= (1))) {", 0, j)
    tail = tail[:k] + "if (1) {" + tail[k + len("if (((v2) >= (1))) {"):]
    j = tail.index("tl_mbar_arrive(")
    e = tail.index("\n", j)
    line = tail[j:e]
    line2 = line.replace("tc_fmod_i32(((v2) - (1)), 4)", "((v2) % 4)")
    if line2 == line:
        sys.exit("gemm_hand_variants.py: R: arrive line not as expected")
    tail = tail[:j] + line2 + tail[e:]
    s = head + tail

if "N" in flags:
    s = sub(r"tl_reg_dec<40>\(\);", "tl_reg_dec<24>();", s, "N-dec", count=1)
    s = sub(r"tl_reg_inc<232>\(\);", "tl_reg_inc<240>();", s, "N-inc", count=1)
    s = sub(r"__launch_bounds__\(384\)", "__launch_bounds__(384, 1)", s, "N-lb", count=1)

if "M" in flags:
    # the refill block: expect (thread 0); fence; __syncthreads(); copies (thread 0)
    m = re.search(r"    if \(\(\(\(\(v2\) \+ \((\d+)\)\)\) < \((\d+)\)\)\) \{\n"
                  r"(      \{ const int tl_tid = tc_tid; \(void\)tl_tid;\n"
                  r"        if \(tl_tid == 0\) tl_mbar_expect\(tl_tma_sa\(tc_smem\) \+ (\d+)u \+ 8u \* \(unsigned\)\(\(\(int\)\(\(\(unsigned int\)\(\(\(v2\) \+ \(\d+\)\)\)\) % (\d+)u\)\)\), \(unsigned\)\(\d+\)\);\n"
                  r"      \}\n)"
                  r"      tl_fence_proxy\(\); __syncthreads\(\);\n", s)
    if not m:
        sys.exit("gemm_hand_variants.py: M: refill block not found")
    dist, S = int(m.group(1)), int(m.group(5))
    if dist != S - 1:
        sys.exit("gemm_hand_variants.py: M: prefetch distance is not stages - 1")
    wait = ("      if ((tc_tid & 31) == 0 && (v2) >= 1) { tl_fence_proxy(); tl_mbar_arrive(tl_tma_sa(tl_empty) + 8u * (unsigned)(((v2) - 1) % %S%)); }\n"
            "      if (tc_tid == 0 && (v2) >= 1) tl_mbar_wait(tl_tma_sa(tl_empty) + 8u * (unsigned)(((v2) - 1) % %S%), (unsigned)((((v2) - 1) / %S%) & 1));\n"
            ).replace("%S%", str(S))
    new = m.group(0)[:m.start(3) - m.start(0)] + wait + m.group(3)
    s = s[:m.start(0)] + new + s[m.end(0):]
    # the empty barriers: static shared, initialized with the full ones (count: the block's warps)
    nthreads = int(re.search(r"const int tc_nthreads = (\d+);", s).group(1))
    s = sub(r"(  extern __shared__ __align__\(1024\) unsigned char tc_smem\[\];\n)",
            r"\1  __shared__ __align__(8) unsigned long long tl_empty[%d];\n" % S, s, "M-decl", count=1)
    s = sub(r"(tl_mbar_init\(tl_tma_sa\(tc_smem\) \+ \d+u \+ 8u \* tl_b, 1u\);)",
            r"\1 for (int tl_b = 0; tl_b < %d; tl_b++) tl_mbar_init(tl_tma_sa(tl_empty) + 8u * tl_b, %du);" % (S, nthreads // 32),
            s, "M-init", count=1)

if "E" in flags:
    i = s.index("{ /* copy C_local -> C (registers) */")
    ep = s[i:]
    stores = re.findall(r"(b\d+)\[\(\(tc_r0_0 \+ \(long long\)(.+?)\) \* (\d+) \+ \(tc_r0_1 \+ \(long long\)(.+?)\)\)\] = (tl_f2[hb])\((b\d+_\d+)\);", ep)
    byreg = {}
    for buf, row, stride, col, cvt, reg in stores:
        byreg.setdefault(reg, (buf, row, stride, col, cvt))
    regs = sorted(byreg, key=lambda r: int(r.split("_")[1]))
    if len(regs) % 2:
        sys.exit("gemm_hand_variants.py: E: odd register count")
    guard = "tc_tid < 256 && " if re.search(r"if \(tc_tid < 256\) \{ /\* C_local register 0", ep) else ""
    def split(e, base):  # "base" or "(base + c)" -> c
        if e == base:
            return 0
        mm = re.fullmatch(r"\(%s \+ (\d+)\)" % base, e)
        if not mm:
            sys.exit("gemm_hand_variants.py: E: index %s not base + constant" % e)
        return int(mm.group(1))
    buf, _, stride, _, _ = byreg[regs[0]]
    body = ["      tl_u16 *const tc_cp = %s + ((tc_r0_0 + (long long)tc_f5_0) * %s + (tc_r0_1 + (long long)tc_f5_1));\n" % (buf, stride)]
    for a, b in zip(regs[0::2], regs[1::2]):
        _, row, stride, col, cvt = byreg[a]
        _, row2, _, col2, _ = byreg[b]
        assert row2 == row, (a, b)
        off = split(row, "tc_f5_0") * int(stride) + split(col, "tc_f5_1")
        assert split(col2, "tc_f5_1") == split(col, "tc_f5_1") + 1
        body.append("      *(tl_u32 *)(tc_cp + %d) = (tl_u32)%s(%s) | ((tl_u32)%s(%s) << 16);\n" % (off, cvt, a, cvt, b))
    m = re.search(r"(    const long long tc_r0_1 = .*;\n)", ep)
    full = "    if (%stc_r0_0 + %d <= %d && tc_r0_1 + %d <= %d) { /* a full tile: unguarded stores */\n" % (guard, BM, M, BN, N)
    rest = ep[m.end():]
    # the printed stores up to the end of the copy block: the else branch
    depth, k = 1, 0
    while depth:
        c = rest[k]
        depth += (c == "{") - (c == "}")
        k += 1
    inner = rest[:k - 1]
    ep = ep[:m.end()] + full + "".join(body) + "    } else {\n" + inner + "    }\n  }" + rest[k:]
    s = s[:i] + ep
    n_sub["E"] = len(body)

open(dst, "w").write(s)
print("gemm_hand_variants.py: %s -> %s [%s] %s" % (src, dst, flags, n_sub), file=sys.stderr)
