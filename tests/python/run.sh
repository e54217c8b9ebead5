#!/bin/sh
# tests/python/run.sh — the Python package's tests (pytest, numpy, cpu
# backend), run by `make test`.  Uses $PYTHON, else the first of python3 and
# /usr/bin/python3 that has numpy and pytest.  Without one, the tests are a
# counted skip -- or a failure when TILEC_REQUIRE_PYTHON=1 (CI sets it).
O=${O:-build}
for py in ${PYTHON:-python3 /usr/bin/python3}; do
    if "$py" -c 'import numpy, pytest' >/dev/null 2>&1; then
        echo "== python tests ($py)"
        TILEC_LIBRARY=${TILEC_LIBRARY:-$(pwd)/$O/libtilec.so} O=$O \
            exec "$py" -m pytest -q -p no:cacheprovider tests/python
    fi
done
if [ "${TILEC_REQUIRE_PYTHON:-0}" = 1 ]; then
    echo "python: FAILED: no python3 with numpy and pytest (TILEC_REQUIRE_PYTHON=1;" \
         "apt-get install python3-numpy python3-pytest python3-venv python3-wheel)"
    exit 1
fi
echo "python: 0 passed, 0 failed, 1 skipped (no python3 with numpy and pytest)"
