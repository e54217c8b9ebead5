# test_jit.py — @tilec.jit on numpy arrays on the cpu backend: results
# against numpy, outputs allocated from out_idx (T.dynamic sizes included),
# in-place and strided arguments, memoisation, tilec.compile, and errors as
# Python exceptions carrying libtilec's FILE:LINE:COL diagnostics.
import os

import numpy as np
import pytest

import tilec
import tilec.language as T

import kernels

rng = np.random.default_rng(0)


def rand(*shape, dtype=np.float32):
    return rng.uniform(-1, 1, shape).astype(dtype)


def test_gemm_matches_numpy_at_ragged_sizes():
    k = kernels.matmul(37, 29, 20)
    a, b = rand(37, 20), rand(20, 29)
    c = k(a, b)
    assert isinstance(c, np.ndarray) and c.shape == (37, 29) and c.dtype == np.float32
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert k.backend == "cpu"


def test_factory_call_is_memoised_per_arguments():
    assert kernels.matmul(37, 29, 20) is kernels.matmul(37, 29, 20)
    assert kernels.matmul(37, 29, 20) is kernels.matmul(M=37, N=29, K=20, block_M=16)
    assert kernels.matmul(37, 29, 20) is not kernels.matmul(37, 29, 20, block_N=32)


def test_float16_gemm_and_module_constant_default():
    k = kernels.matmul(16, 16, 16, dtype="float16")
    a, b = rand(16, 16, dtype=np.float16), rand(16, 16, dtype=np.float16)
    c = k(a, b)
    assert c.dtype == np.float16
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=2e-2, atol=2e-2)
    # block_M's default is the module constant BLOCK, written into the source.
    assert "BLOCK = 16" in k.source.text


def test_two_outputs_and_a_macro_helper():
    k = kernels.two_outputs(70)
    x = rand(70)
    y, z = k(x)
    np.testing.assert_allclose(y, x * kernels.SCALE)
    assert z.dtype == np.int32 and (z == np.arange(70)).all()


def test_dynamic_output_sized_from_inputs():
    k = kernels.add_dynamic()
    for n in (5, 100):
        a, b = rand(n), rand(n)
        c = k(a, b)
        assert c.shape == (n,)
        np.testing.assert_allclose(c, a + b)


def test_inplace_write_reaches_the_callers_array():
    k = kernels.inplace_scale(40)
    x = rand(40)
    want = x * 3
    assert k(x) is None
    np.testing.assert_allclose(x, want)


def test_strided_input_and_output_passed_in():
    k = kernels.matmul(16, 16, 16)
    big = rand(16, 32)
    a = big[:, ::2]                      # not contiguous
    b = rand(16, 16)
    c = np.zeros((16, 16), np.float32)
    k(a, b, c)                           # all three given: nothing allocated
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    ct = np.zeros((16, 16), np.float32).T  # a strided output is written back
    k(a, b, ct)
    np.testing.assert_allclose(ct, a @ b, rtol=1e-5, atol=1e-5)


def test_read_only_input():
    k = kernels.matmul(16, 16, 16)
    a, b = rand(16, 16), rand(16, 16)
    a.setflags(write=False)
    np.testing.assert_allclose(k(a, b), a @ b, rtol=1e-5, atol=1e-5)


def test_wrong_argument_count_is_a_type_error():
    k = kernels.matmul(16, 16, 16)
    with pytest.raises(TypeError, match="takes 2 inputs"):
        k(rand(16, 16))


def test_shape_and_dtype_mismatch_carry_the_c_message():
    k = kernels.matmul(16, 16, 16)
    with pytest.raises(tilec.TilecError, match="A"):
        k(rand(16, 8), rand(16, 16))
    with pytest.raises(tilec.TilecError):
        k(rand(16, 16, dtype=np.float64), rand(16, 16))


def test_diagnostic_points_into_the_users_file():
    @tilec.jit(out_idx=[-1])
    def broken(N):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(N):
                    B[i] = A[i] + not_defined_anywhere  # noqa: F821
        return main

    with pytest.raises(tilec.ProgramError) as ei:
        broken(8)
    msg = str(ei.value)
    line = next(i for i, l in enumerate(open(__file__), 1) if "not_defined_anywhere  #" in l)
    col = open(__file__).read().splitlines()[line - 1].index("not_defined_anywhere") + 1
    assert "%s:%d:%d: error:" % (__file__, line, col) in msg
    assert "not_defined_anywhere" in msg and "^" in msg
    assert ei.value.status == "invalid program"


def test_unsupported_argument_value_is_a_type_error():
    with pytest.raises(TypeError, match="cannot be passed"):
        kernels.matmul(16, 16, object())


def test_compile_of_a_factory_executed_by_python():
    def scale(N, factor=0.5):
        @T.prim_func
        def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(N):
                    Y[i] = X[i] * factor
        return main

    func = scale(24, factor=4.0)
    assert isinstance(func, T.PrimFunc)
    k = tilec.compile(func, out_idx=[-1], target="cpu")
    x = rand(24)
    np.testing.assert_allclose(k(x), x * 4.0)
    with pytest.raises(TypeError):
        func(x)


def test_kernel_source_ir_and_profiler():
    k = kernels.matmul(16, 16, 16)
    assert "kernel matmul" in k.ir and "param C global float32 [16, 16]" in k.ir
    assert k.get_kernel_source()            # the cpu backend's generated C
    assert [p["name"] for p in k.params] == ["A", "B", "C"] and k.out_idx == [2]
    prof = k.get_profiler()
    assert prof.do_bench(warmup=0, rep=0) >= 0
    prof.assert_allclose(lambda a, b: a @ b, atol=1e-4, rtol=1e-4)
    with pytest.raises(AssertionError):
        prof.assert_allclose(lambda a, b: a @ b + 1, atol=1e-4, rtol=1e-4)


def test_library_found_through_tilec_library():
    assert os.path.samefile(tilec.library_path(), os.environ["TILEC_LIBRARY"])


def test_jit_accepts_tilelang_keywords():
    f = tilec.jit(out_idx=-1, target="auto", pass_configs={"tl.disable_tma_lower": True},
                  execution_backend="cython", verbose=False)(kernels.matmul.func)
    k = f(16, 16, 16)
    a, b = rand(16, 16), rand(16, 16)
    np.testing.assert_allclose(k(a, b), a @ b, rtol=1e-5, atol=1e-5)


def test_unknown_target_is_refused(monkeypatch):
    monkeypatch.delenv("TILEC_BACKEND")
    with pytest.raises(tilec.TilecError, match="unknown target"):
        tilec.jit(out_idx=[-1], target="tpu")(kernels.matmul.func)(16, 16, 16)


def test_eager_style_kernel_runs_on_call():
    a, b = rand(5, 70), rand(5, 70)
    c = kernels.eager_add(a, b)
    np.testing.assert_allclose(c, a + b * kernels.SCALE, rtol=1e-6)
    # The sizes are T.const symbols: other shapes reuse the same kernel.
    a2, b2 = rand(3, 10), rand(3, 10)
    np.testing.assert_allclose(kernels.eager_add(a2, b2), a2 + b2 * kernels.SCALE, rtol=1e-6)
    assert len(kernels.eager_add._kernels) == 1
    np.testing.assert_allclose(kernels.eager_add(a2, b2, block=8), a2 + b2 * 2, rtol=1e-6)


def test_eager_style_compile_with_sizes():
    k = kernels.eager_add.compile(M=4, N=6, block=8, dtype=np.float32)
    assert "param A global float32 [4, 6]" in k.ir and k.out_idx == [2]
    a, b = rand(4, 6), rand(4, 6)
    np.testing.assert_allclose(k(a, b), a + b * 2, rtol=1e-6)
    with pytest.raises(tilec.TilecError):
        k(rand(5, 6), rand(5, 6))          # compiled for M=4


def test_autotune_times_the_configs_and_keeps_one():
    configs = [{"block_M": 16, "block_N": 16}, {"block_M": 32, "block_N": 16},
               {"block_M": 16, "block_K": 0}]            # the last does not compile
    tuned = tilec.autotune(configs=configs, warmup=0, rep=1)(kernels.matmul)
    k = tuned(32, 32, 16)
    key = ((32, 32, 16), ())
    assert tuned.best[key] in configs[:2]
    assert k is kernels.matmul(32, 32, 16, **tuned.best[key])
    a, b = rand(32, 16), rand(16, 32)
    np.testing.assert_allclose(k(a, b), a @ b, rtol=1e-5, atol=1e-5)
    assert tuned(32, 32, 16) is k                          # tuned once per arguments


def test_a_config_that_does_not_compile_raises_alone():
    with pytest.raises(tilec.TilecError):
        kernels.matmul(32, 32, 16, block_M=16, block_K=0)
