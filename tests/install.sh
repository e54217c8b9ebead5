#!/bin/sh
# tests/install.sh — `make install` into a fresh temporary prefix, then use
# the installation as a user would, with nothing of the build tree in the
# environment: the installed CLI starts (runpath), `tilec devices` lists the
# plugins of PREFIX/lib/tilec (PoCL's opencl plugin too where PoCL is
# installed), `tilec run examples/gemm.py --check` passes, `tilec conform`
# finds the suite in PREFIX/share/tilec, a user program builds with
# pkg-config and runs, a plugin builds from the installed SDK and is
# accepted; then `make uninstall` leaves no file behind, and a DESTDIR
# install stages under DESTDIR/PREFIX.
# Usage: O=build sh tests/install.sh
O=${O:-build}
tmp=$(mktemp -d)
prefix=$tmp/prefix
pass=0
fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; [ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | tail -n 15; fail=$((fail + 1)); }
# Runs the installed tools with a clean environment (no plugin path, no
# library path, a private cache).
user() { env -u TILEC_PLUGIN_PATH -u LD_LIBRARY_PATH -u TILEC_BACKEND TILEC_CACHE_DIR="$tmp/cache" "$@"; }

if ! make -s O="$O" PREFIX="$prefix" install > "$tmp/out" 2>&1; then
    bad "make install PREFIX=$prefix"; rm -rf "$tmp"; exit 1
fi
ok "make install PREFIX=$prefix"

if user "$prefix/bin/tilec" --version > "$tmp/out" 2>&1; then ok "the installed tilec starts"
else bad "the installed tilec starts"; fi

user "$prefix/bin/tilec" devices > "$tmp/devices" 2>&1
cp "$tmp/devices" "$tmp/out"
if grep -q "^cpu .* ok " "$tmp/out" && grep -q "$prefix/lib/tilec/libtilec-cpu.so" "$tmp/out" &&
   ! grep -q "$(cd "$O" && pwd)/" "$tmp/out"; then
    ok "tilec devices lists the installed plugins, none of the build tree"
else bad "tilec devices lists the installed plugins, none of the build tree"; fi
if ldconfig -p 2>/dev/null | grep -q libpocl || [ -d /etc/OpenCL/vendors ]; then
    if grep -q "^opencl .* ok .*$prefix/lib/tilec/libtilec-opencl.so" "$tmp/out"; then
        ok "the installed opencl plugin is ok (PoCL installed)"
    else bad "the installed opencl plugin is ok (PoCL installed)"; fi
fi

for b in cpu opencl; do
    grep -q "^$b .* ok " "$tmp/devices" || continue
    if user env TILEC_BACKEND=$b "$prefix/bin/tilec" run examples/gemm.py --check > "$tmp/run" 2>&1 &&
       grep -q "^PASS" "$tmp/run"; then
        ok "installed tilec run examples/gemm.py --check ($b)"
    else cp "$tmp/run" "$tmp/out"; bad "installed tilec run examples/gemm.py --check ($b)"; fi
done

# Outside the source tree, the suite must come from PREFIX/share/tilec.
if (cd "$tmp" && user "$prefix/bin/tilec" conform --backend cpu --no-cert --filter elementwise) \
        > "$tmp/out" 2>&1 && grep -q "items in .*: pass [1-9]" "$tmp/out" &&
   grep -q "$prefix/bin/../share/tilec/conformance" "$tmp/out"; then
    ok "the installed tilec conform finds its suite"
else bad "the installed tilec conform finds its suite"; fi

if PKG_CONFIG_PATH="$prefix/lib/pkgconfig" cc -std=c11 -o "$tmp/api_demo" examples/api_demo.c \
        $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs tilec) > "$tmp/out" 2>&1 &&
   user env TILEC_BACKEND=cpu "$tmp/api_demo" > "$tmp/out" 2>&1; then
    ok "a user program builds with pkg-config and runs"
else bad "a user program builds with pkg-config and runs"; fi

if cp -R "$prefix/share/tilec/plugin-sdk" "$tmp/sdk" &&
   make -s -C "$tmp/sdk/template" OUT="$tmp/vendor" NAME=vendorx > "$tmp/out" 2>&1 &&
   user env TILEC_PLUGIN_PATH="$tmp/vendor" "$prefix/bin/tilec" devices > "$tmp/out" 2>&1 &&
   grep -q "^vendorx .* ok " "$tmp/out"; then
    ok "a plugin builds from the installed SDK and is accepted"
else bad "a plugin builds from the installed SDK and is accepted"; fi

make -s O="$O" PREFIX="$prefix" uninstall > "$tmp/out" 2>&1
find "$prefix" ! -type d > "$tmp/out" 2>&1
if [ ! -s "$tmp/out" ]; then ok "make uninstall removes every installed file"
else bad "make uninstall removes every installed file"; fi

if make -s O="$O" PREFIX=/opt/tilec-staged DESTDIR="$tmp/stage" install > "$tmp/out" 2>&1 &&
   [ -x "$tmp/stage/opt/tilec-staged/bin/tilec" ] &&
   grep -q '^prefix=/opt/tilec-staged$' "$tmp/stage/opt/tilec-staged/lib/pkgconfig/tilec.pc"; then
    ok "DESTDIR stages under DESTDIR/PREFIX, tilec.pc names PREFIX"
else bad "DESTDIR stages under DESTDIR/PREFIX, tilec.pc names PREFIX"; fi

rm -rf "$tmp"
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
