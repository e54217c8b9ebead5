# test_torch.py — torch tensors as kernel arguments: on the CPU here (when
# torch imports; a counted skip otherwise), and on a GPU with the cuda
# backend (`-k cuda`; skipped without torch CUDA or the cuda backend), where
# the kernel must use the tensors' own memory: zero-copy, checked through
# data pointers and in-place writes.
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tilec  # noqa: E402

import kernels  # noqa: E402


def test_torch_cpu_in_torch_out():
    k = kernels.matmul(37, 29, 20)
    a, b = torch.rand(37, 20), torch.rand(20, 29)
    c = k(a, b)
    assert isinstance(c, torch.Tensor) and c.shape == (37, 29) and c.device.type == "cpu"
    torch.testing.assert_close(c, a @ b, rtol=1e-5, atol=1e-5)
    assert k.last_shared == [True, True, True]


def test_torch_cpu_strided_and_bfloat16():
    k = kernels.matmul(16, 16, 16)
    a = torch.rand(16, 32)[:, ::2]
    b = torch.rand(16, 16)
    torch.testing.assert_close(k(a, b), a @ b, rtol=1e-5, atol=1e-5)
    g = torch.rand(16, 16, requires_grad=True)
    torch.testing.assert_close(k(g, b), g.detach() @ b, rtol=1e-5, atol=1e-5)
    kb = kernels.matmul(16, 16, 16, dtype="bfloat16")
    ab, bb = torch.rand(16, 16).bfloat16(), torch.rand(16, 16).bfloat16()
    cb = kb(ab, bb)
    assert cb.dtype == torch.bfloat16
    torch.testing.assert_close(cb.float(), ab.float() @ bb.float(), rtol=2e-2, atol=2e-2)


def test_torch_cpu_buffer_round_trip():
    x = torch.arange(6, dtype=torch.float32)
    buf = tilec.Buffer.from_dlpack(x)
    assert buf.shared
    assert torch.from_dlpack(buf).data_ptr() == x.data_ptr()


def _cuda_backend(monkeypatch):
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    monkeypatch.setenv("TILEC_BACKEND", "cuda")
    try:
        tilec.context("cuda")
    except tilec.TilecError as e:
        pytest.skip("no cuda backend: %s" % e)


def test_cuda_gemm_zero_copy(monkeypatch):
    _cuda_backend(monkeypatch)
    k = kernels.matmul(256, 192, 128, block_M=64, block_N=64, block_K=32, dtype="float16")
    assert k.backend == "cuda"
    a = torch.randn(256, 128, device="cuda", dtype=torch.float16)
    b = torch.randn(128, 192, device="cuda", dtype=torch.float16)
    c = k(a, b)
    assert c.device.type == "cuda" and c.dtype == torch.float16
    assert k.last_shared == [True, True, True]
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)


def test_cuda_inplace_write_lands_in_the_tensor(monkeypatch):
    # Device tensors are never copied, so the result can only be in x if the
    # kernel wrote x's own memory.
    _cuda_backend(monkeypatch)
    k = kernels.inplace_scale(1000)
    x = torch.randn(1000, device="cuda")
    want = x * 3
    k(x)
    assert k.last_shared == [True]
    torch.testing.assert_close(x, want)


def test_cuda_buffers_are_the_tensors_memory(monkeypatch):
    _cuda_backend(monkeypatch)
    x = torch.randn(64, device="cuda")
    buf = tilec.Buffer.from_dlpack(x, copy=False)
    assert buf.shared
    y = torch.from_dlpack(buf)
    assert y.device.type == "cuda" and y.data_ptr() == x.data_ptr()
    out = tilec.Buffer.empty((32, 4), "float32")          # tilec's own device memory
    t = torch.from_dlpack(out)
    assert t.device.type == "cuda" and t.shape == (32, 4)
    t.fill_(1.5)
    torch.cuda.synchronize()
    assert (np.frombuffer(out.read(), np.float32) == 1.5).all()


def test_cuda_dynamic_and_two_outputs(monkeypatch):
    _cuda_backend(monkeypatch)
    k = kernels.add_dynamic()
    a, b = torch.randn(777, device="cuda"), torch.randn(777, device="cuda")
    torch.testing.assert_close(k(a, b), a + b)
    y, z = kernels.two_outputs(300)(a[:300])
    torch.testing.assert_close(y, a[:300] * kernels.SCALE)
    assert z.device.type == "cuda" and (z.cpu() == torch.arange(300, dtype=torch.int32)).all()


def test_cuda_launch_is_enqueued_on_the_current_stream(monkeypatch):
    # The kernel must run after the work already on torch's current stream
    # (a second of GPU sleep, then y = x * 2) and the call must not wait for
    # it: the stream is still busy when the call returns.
    _cuda_backend(monkeypatch)
    k = kernels.inplace_scale(1 << 20)
    x = torch.ones(1 << 20, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(int(2e9))
        y = x * 2
        k(y)
        assert k.last_stream == s.cuda_stream and k.last_elapsed_ms is None
        assert not s.query()
    s.synchronize()
    torch.testing.assert_close(y, x * 6)


def test_cuda_default_stream_launch_does_not_wait(monkeypatch):
    # torch's default stream (handle 0) goes to tilec as CU_STREAM_LEGACY,
    # not as NULL (which would mean "launch and wait"): the call returns
    # while the stream is still busy with the sleep before it, and the
    # result is right after a synchronize.
    _cuda_backend(monkeypatch)
    k = kernels.inplace_scale(1 << 20)
    x = torch.ones(1 << 20, device="cuda")
    for _ in range(2):                 # a new plan, then the same one
        torch.cuda.synchronize()
        torch.cuda._sleep(int(2e9))
        k(x)
        assert k.last_stream == 1 and not torch.cuda.current_stream().query()
    torch.cuda.synchronize()
    torch.testing.assert_close(x, torch.full_like(x, 9.0))


def test_cuda_repeated_calls_take_the_fast_path(monkeypatch):
    # Torch CUDA tensors launch from the kernel's plan for their dtypes and
    # shapes (python/tilec/_fast.py): every such call counts a hit, gets a
    # new output and the right result; a strided input takes the general
    # path (no hit) and is right too; a new shape gets its own plan.
    _cuda_backend(monkeypatch)
    k = kernels.add_dynamic(block=64)    # a kernel no other test has called
    a, b = torch.randn(777, device="cuda"), torch.randn(777, device="cuda")
    c1, c2 = k(a, b), k(a, b)
    assert k._fast.hits == 2 and c1.data_ptr() != c2.data_ptr()
    torch.testing.assert_close(c1, a + b)
    torch.testing.assert_close(c2, a + b)
    s = torch.randn(1554, device="cuda")[::2]
    torch.testing.assert_close(k(s, b), s + b)
    assert k._fast.hits == 2 and k.last_shared[0] is True
    a2, b2 = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    torch.testing.assert_close(k(a2, b2), a2 + b2)
    out = torch.empty(1000, device="cuda")
    assert k(a2, b2, out) is None
    torch.testing.assert_close(out, a2 + b2)
    assert k._fast.hits == 4 and len(k._fast.plans) == 3


def test_cuda_tensor_on_cpu_backend_is_refused():
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    k = kernels.inplace_scale(8)   # TILEC_BACKEND=cpu (conftest)
    with pytest.raises(tilec.TilecError, match="cannot use the memory"):
        k(torch.zeros(8, device="cuda"))
