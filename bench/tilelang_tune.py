"""tilelang_tune.py -- TileLang's own autotuner over the same space that
`tilec tune` searches, for the figures of the tuning benchmark.

    python3 bench/tilelang_tune.py EXAMPLE FACTORY --space NAME=V1,V2 ... \
        [-D NAME=VALUE ...] [--out-idx N]

The example file is the one tilec tunes.  Its factory is taken without its
`@tilelang.jit` decorator (the autotuner wants a function that returns a
PrimFunc) and handed to `tilelang.autotuner.AutoTuner` with every point of
the product of the --space lists as a config.  Prints one line: the best
config, its latency, the number of configs and the wall time of the search.
A missing or failing TileLang prints the reason and exits 0 (a blank
column, not a failed benchmark).
"""
import argparse
import itertools
import os
import re
import sys
import time


def value(s):
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def tuning_kernel(path, name, fixed, tuned):
    """The factory without its @tilelang.jit decorator, and kernel(NAMES...)
    calling it with the fixed values, in a module written to a temporary
    file: TileLang's autotuner reads the kernel's source (inspect) and keys
    its cache on closure cells it can serialize, so both functions are
    plain module-level code with the fixed values as literals; and it takes
    a config's keys from the kernel's own parameters ("Unused keys in
    config" otherwise), so kernel names each tuned one."""
    import importlib.util
    import tempfile
    src = re.sub(r"^@tilelang\.jit\(.*\)\s*$", "", open(path).read(), flags=re.M)
    args = "".join(f"{k}={v!r}, " for k, v in fixed.items())
    params = ", ".join(tuned)
    passed = "".join(f"{k}={k}, " for k in tuned)
    src += f"\n\ndef kernel({params}):\n    return {name}({args}{passed})\n"
    f = tempfile.NamedTemporaryFile("w", suffix=".py", prefix="tl_tune_", delete=False)
    f.write(src)
    f.close()
    spec = importlib.util.spec_from_file_location(os.path.basename(f.name)[:-3], f.name)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.kernel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("example")
    ap.add_argument("factory")
    ap.add_argument("--space", action="append", default=[])
    ap.add_argument("-D", action="append", default=[], dest="defs")
    ap.add_argument("--out-idx", type=int, default=-1)
    a = ap.parse_args()
    try:
        from tilelang.autotuner import AutoTuner
    except Exception as e:  # no TileLang here
        print(f"tilelang autotuner: unavailable ({type(e).__name__}: {e})")
        return 0
    fixed = {k: value(v) for k, v in (d.split("=", 1) for d in a.defs)}
    names, lists = [], []
    for s in a.space:
        k, vs = s.split("=", 1)
        names.append(k)
        lists.append([value(v) for v in vs.split(",")])
    configs = [dict(zip(names, p)) for p in itertools.product(*lists)]
    kernel = tuning_kernel(a.example, a.factory, fixed, names)

    t0 = time.perf_counter()
    try:
        tuner = (AutoTuner.from_kernel(kernel=kernel, configs=configs)
                 .set_compile_args(out_idx=[a.out_idx], target="auto")
                 .set_profile_args())
        r = tuner.run(warmup=3, rep=20)
    except Exception as e:
        msg = str(e).strip().splitlines()
        print(f"tilelang autotuner: failed ({type(e).__name__}: {msg[-1] if msg else ''})"[:300])
        return 0
    wall = time.perf_counter() - t0
    print(f"tilelang autotuner: {len(configs)} configs in {wall:.1f} s, best {r.config} "
          f"latency {r.latency:.4f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
