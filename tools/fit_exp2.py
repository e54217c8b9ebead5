#!/usr/bin/env python3
"""fit_exp2.py -- the coefficients of the CPU backend's exp2 polynomial.

2^f on [-1/2, 1/2] as 1 + f * s(f), s a polynomial of degree DEG (default 5),
fitted so that the relative error of 1 + f * s(f) is as small as it can be
in the maximum norm (Lawson's iteratively reweighted least squares over
Chebyshev nodes, in 50-digit arithmetic with mpmath).  Prints the
coefficients of s, constant term first, and the fit's relative error.
backends/cpu/cpu_prelude.h (TC_EXP2_CORE_) holds the values printed here,
rounded to float; tests/test_cpu_math.c checks the ulp bound they give.
"""
import sys

import mpmath as mp

mp.mp.dps = 50
DEG = int(sys.argv[1]) if len(sys.argv) > 1 else 5
N = 600
xs = [mp.mpf(1) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / N) for k in range(N)]
# relative error e(f) = (1 + f s(f) - 2^f) / 2^f = f / 2^f * (s(f) - g(f)),
# g(f) = (2^f - 1) / f: a weighted fit of g by s with weight |f| / 2^f
g = [mp.expm1(x * mp.log(2)) / x for x in xs]
wt = [abs(x) / mp.power(2, x) for x in xs]
lam = [mp.mpf(1) / N] * N
for it in range(200):
    A = mp.matrix(DEG + 1, DEG + 1)
    b = mp.matrix(DEG + 1, 1)
    for x, gx, w, l in zip(xs, g, wt, lam):
        ww = l * w * w
        pw = [x ** i for i in range(DEG + 1)]
        for i in range(DEG + 1):
            b[i] += ww * pw[i] * gx
            for j in range(DEG + 1):
                A[i, j] += ww * pw[i] * pw[j]
    c = mp.lu_solve(A, b)
    err = [w * (mp.polyval(list(reversed(c)), x) - gx) for x, gx, w in zip(xs, g, wt)]
    tot = sum(l * abs(e) for l, e in zip(lam, err))
    lam = [l * abs(e) / tot for l, e in zip(lam, err)]
print("max relative error %.3e" % float(max(abs(e) for e in err)))
for i in range(DEG + 1):
    print("s%d = %s" % (i, mp.nstr(c[i], 20)))
