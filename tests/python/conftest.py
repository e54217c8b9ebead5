# conftest.py — the Python package's tests run against this checkout: the
# package from python/, libtilec from the build tree (TILEC_LIBRARY, else
# $O/libtilec.so), the cpu backend, and a kernel cache of their own.
import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("TILEC_LIBRARY",
                      os.path.join(ROOT, os.environ.get("O", "build"), "libtilec.so"))
os.environ["TILEC_BACKEND"] = "cpu"  # the torch CUDA tests pick cuda themselves


@pytest.fixture(scope="session", autouse=True)
def _cache_dir(tmp_path_factory):
    os.environ["TILEC_CACHE_DIR"] = str(tmp_path_factory.mktemp("tilec-cache"))
