"""Runs TileLang's example scripts under `python -m tilec` and counts how
many run to the end (exit status 0), host code, torch references and checks
included.

    python3 bench/tilelang_scripts.py TILELANG_CHECKOUT [--timeout S] [--out FILE.md]
        [--filter SUBSTRING] [--commit TILELANG_COMMIT]

Every examples/**/example_*.py of the checkout runs in its own directory with
tilelang resolved to tilec (PYTHONPATH=python, TILEC_LIBRARY=build/libtilec.so
unless set; TILEC_BACKEND as given).  The report lists each script with
pass / fail / timeout and the last line of its error output, then the count;
with --out it is also written there with the machine and both commits.
"""
import argparse
import glob
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def commit(d):
    r = subprocess.run(["git", "-C", d, "rev-parse", "--short", "HEAD"], capture_output=True,
                       text=True)
    return r.stdout.strip() or "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tilelang")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out")
    ap.add_argument("--filter", default="", help="only scripts whose path contains this")
    ap.add_argument("--commit", help="TileLang's commit, when the checkout is not a git tree")
    ap.add_argument("--shard", default="0/1", help="I/N: every N-th script from the I-th")
    ap.add_argument("--budget", type=float, default=0,
                    help="seconds; scripts not started by then are listed as 'not run'")
    a = ap.parse_args()
    scripts = sorted(glob.glob(os.path.join(a.tilelang, "examples", "**", "example_*.py"),
                               recursive=True))
    scripts = [s for s in scripts if a.filter in s]
    i, n = (int(x) for x in a.shard.split("/"))
    scripts = scripts[i::n]
    start = time.time()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("TILEC_LIBRARY", os.path.join(ROOT, "build", "libtilec.so"))
    rows, passed = [], 0
    for s in scripts:
        t0 = time.time()
        if a.budget and t0 - start > a.budget:
            rows.append((os.path.relpath(s, a.tilelang), "not run", "0", "budget spent"))
            continue
        try:
            r = subprocess.run([sys.executable, "-m", "tilec", os.path.basename(s)],
                               cwd=os.path.dirname(s), env=env, capture_output=True, text=True,
                               timeout=a.timeout)
            verdict = "pass" if r.returncode == 0 else "fail"
            err = [l for l in r.stderr.strip().splitlines() if l.strip()]
            why = err[-1][:160] if err and verdict == "fail" else ""
        except subprocess.TimeoutExpired:
            verdict, why = "timeout", "after %.0f s" % a.timeout
        passed += verdict == "pass"
        rel = os.path.relpath(s, a.tilelang)
        rows.append((rel, verdict, "%.1f" % (time.time() - t0), why))
        print("%-7s %6ss  %s  %s" % (verdict, rows[-1][2], rel, why), flush=True)
    summary = "%d of %d TileLang example scripts ran under python -m tilec (backend %s%s)" % (
        passed, len(scripts), os.environ.get("TILEC_BACKEND", "auto"),
        ", shard " + a.shard if n > 1 else "")
    print(summary)
    if a.out:
        with open(a.out, "w") as f:
            f.write("# TileLang example scripts under `python -m tilec`\n\n")
            f.write("Machine: %s, %s; Python %s.  tilec %s, TileLang %s.  Command: `%s`.\n\n" % (
                platform.node(), platform.processor() or platform.machine(),
                platform.python_version(), commit(ROOT), a.commit or commit(a.tilelang),
                " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])))
            f.write("**%s.**\n\n| script | result | seconds | last error line |\n"
                    "| --- | --- | --- | --- |\n" % summary)
            for rel, v, sec, why in rows:
                f.write("| %s | %s | %s | %s |\n" % (rel, v, sec, why.replace("|", "\\|")))


if __name__ == "__main__":
    main()
