# test_script.py — `python -m tilec SCRIPT.py` runs TileLang scripts (host
# code included) with tilelang resolved to tilec, and `pip install ./python`
# into a fresh virtualenv gives a working package.
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run(args, **kw):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.update(kw.pop("env", {}))
    return subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          **kw)


@pytest.mark.parametrize("script,expect", [("matmul.py", "matmul 96x80x64 on cpu: PASS"),
                                           ("softmax.py", "softmax 37x128 on cpu: PASS")])
def test_example_scripts_run_under_python_m_tilec(script, expect):
    r = run([sys.executable, "-m", "tilec", os.path.join("python", "examples", script)])
    assert r.returncode == 0, r.stderr
    assert expect in r.stdout


def test_script_arguments_reach_the_script():
    r = run([sys.executable, "-m", "tilec", "python/examples/matmul.py", "33", "17", "9"])
    assert r.returncode == 0, r.stderr
    assert "matmul 33x17x9 on cpu: PASS" in r.stdout


def test_hook_maps_tilelang_and_refuses_the_rest(tmp_path):
    s = tmp_path / "s.py"
    s.write_text(textwrap.dedent("""\
        import tilelang, tilelang.language as T, tilec
        from tilelang.autotuner import autotune
        from tilelang import testing
        assert tilelang is tilec and T is tilec.language and autotune is tilec.autotune
        assert testing is tilec.testing
        from tilelang.profiler import do_bench
        from tilelang.utils.tensor import torch_assert_close
        from tilelang.transform import PassConfigKey
        assert tilelang.PassConfigKey.TL_ENABLE_FAST_MATH == "tl.enable_fast_math"
        assert PassConfigKey.TL_DISABLE_TMA_LOWER == "tl.disable_tma_lower"
        assert tilelang.next_power_of_2(33) == 64 and tilelang.cdiv(7, 2) == 4
        assert do_bench(lambda: None, warmup=0, rep=1) >= 0
        torch_assert_close([1.0, 2.0], [1.0, 2.001])
        try:
            import tilelang.carver
        except ModuleNotFoundError as e:
            print("refused:", e)
        """))
    r = run([sys.executable, "-m", "tilec", str(s)])
    assert r.returncode == 0, r.stderr
    assert "refused: tilelang.carver is not provided by tilec" in r.stdout


def test_diagnostic_of_a_script_names_its_line(tmp_path):
    s = tmp_path / "bad.py"
    s.write_text(textwrap.dedent("""\
        import tilelang
        import tilelang.language as T

        @tilelang.jit(out_idx=[-1])
        def f(N):
            @T.prim_func
            def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
                with T.Kernel(1, threads=32) as bx:
                    T.no_such_primitive(A, B)
            return main

        f(8)
        """))
    r = run([sys.executable, "-m", "tilec", str(s)])
    assert r.returncode != 0
    assert "%s:9:" % s in r.stderr and "error:" in r.stderr and "ProgramError" in r.stderr


def test_usage_without_a_script():
    r = run([sys.executable, "-m", "tilec"])
    assert r.returncode == 2 and "usage: python -m tilec" in r.stdout


def test_pip_install_into_a_fresh_venv(tmp_path):
    # A copy, so pip's in-tree build leaves nothing in python/.  The venv sees
    # the system's site packages (numpy, and wheel for an offline build).
    src = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "python"), src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    venv = tmp_path / "venv"
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail("python3 -m venv failed (install python3-venv): " + r.stderr)
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-build-isolation",
                        "--no-index", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    user = tmp_path / "user_gemm.py"
    user.write_text(textwrap.dedent("""\
        import numpy as np
        import tilec
        import tilec.language as T

        @tilec.jit(out_idx=[-1])
        def gemm(M, N, K, bm=32, bn=32, bk=16):
            @T.prim_func
            def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
                     C: T.Tensor((M, N), "float32")):
                with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
                    As = T.alloc_shared((bm, bk), "float32")
                    Bs = T.alloc_shared((bk, bn), "float32")
                    acc = T.alloc_fragment((bm, bn), "float32")
                    T.clear(acc)
                    for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                        T.copy(A[by * bm, k * bk], As)
                        T.copy(B[k * bk, bx * bn], Bs)
                        T.gemm(As, Bs, acc)
                    T.copy(acc, C[by * bm, bx * bn])
            return main

        a = np.random.rand(50, 40).astype(np.float32)
        b = np.random.rand(40, 60).astype(np.float32)
        c = gemm(50, 60, 40)(a, b)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
        print("installed:", tilec.__file__)
        """))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([py, str(user)], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "installed: " + str(venv) in r.stdout
