#!/bin/sh
# tests/conform.sh — the conformance suite in CI (make test, make conform):
#   1. every case on the cpu backend (through its plugin build; the
#      certificate lands beside build/libtilec-cpu.so),
#   2. every case on the template plugin of plugin-sdk/template, which must
#      certify, and `tilec conform --verify` on its certificate,
#   3. the template with T.exp deliberately mis-lowered: the math cases
#      must come out `fail`;
#   4. the template built to speak only plugin ABI 1.0 and tile IR 1.0: the
#      ABI cases and a GEMM case, and a `tilec run --check` through the
#      host, must pass (1.0 plugins keep loading);
#   5. the hip plugin compile-only (--compile-only --arch gfx90a,gfx1030):
#      every case compiled by hiprtc must certify, the certificate says
#      "compile-only" and --verify accepts it (skipped without hiprtc
#      unless TILEC_REQUIRE_HIP=1);
#   6. every case and the ABI cases on the vulkan plugin's device 0
#      (lavapipe in CI), which must certify (skipped without a Vulkan
#      device unless TILEC_REQUIRE_VULKAN=1).
# JUnit and JSON reports go to $O/conform/.  Usage: O=build sh tests/conform.sh
O=${O:-build}
T="$O/tilec"
out="$O/conform"
mkdir -p "$out"
fail=0
note() { echo "conform.sh: $*"; }

note "cpu backend"
if ! "$T" conform --backend cpu --junit "$out/cpu.xml" --json "$out/cpu.json"; then
    note "FAILED: unexpected results on the cpu backend"; fail=1
fi

note "template plugin"
tpl="$O/template/libtilec-template.so"
if ! "$T" conform --plugin "$tpl" --junit "$out/template.xml" --json "$out/template.json" > "$out/template.log"; then
    note "FAILED: unexpected results on the template plugin"; fail=1
fi
cat "$out/template.log"
grep -q "CERTIFIED, certificate" "$out/template.log" || { note "FAILED: the template did not certify"; fail=1; }
if ! "$T" conform --verify "$tpl.cert.json" --plugin "$tpl"; then
    note "FAILED: the template's certificate does not verify"; fail=1
fi

note "mis-lowered template (must fail the math cases)"
"$T" conform --plugin "$O/template/libtilec-template_wrong.so" --filter math_unary_f32 --no-abi --no-cert \
    --json "$out/wrong.json" > /dev/null 2>&1
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q '"id": "math_unary_f32/0", "kind": "case", "status": "fail"' "$out/wrong.json"; then
    note "FAILED: the mis-lowered template was not caught (exit $rc)"; fail=1
else
    note "the mis-lowered template is caught: math_unary_f32 fails"
fi
note "ABI 1.0 build of the template"
t10="$O/template/libtilec-template_abi10.so"
for f in abi/ gemm_nn; do
    if ! "$T" conform --plugin "$t10" --filter "$f" --no-cert > "$out/abi10.log" 2>&1 ||
       ! grep -q "ABI 1.0," "$out/abi10.log"; then
        cat "$out/abi10.log"; note "FAILED: the ABI 1.0 template ($f)"; fail=1
    fi
done
if ! TILEC_PLUGIN_PATH="$t10" TILEC_CACHE=0 "$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 \
        --backend template_abi10 --check > "$out/abi10.log" 2>&1; then
    cat "$out/abi10.log"; note "FAILED: tilec run on the ABI 1.0 template"; fail=1
fi
note "hip plugin, compile-only for gfx90a and gfx1030 (hiprtc; no AMD GPU needed)"
hip="$O/libtilec-hip.so"
"$T" conform --plugin "$hip" --compile-only --arch gfx90a,gfx1030 --cert "$out/hip.cert.json" \
    --json "$out/hip.json" > "$out/hip.log" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -q "hiprtc not found" "$out/hip.json" 2>/dev/null && [ "${TILEC_REQUIRE_HIP:-0}" != 1 ]; then
    note "skipped: no hiprtc on this machine (Debian: libamdhip64-dev)"
elif [ "$rc" -ne 0 ] || ! grep -q "CERTIFIED, certificate" "$out/hip.log" ||
     ! grep -q '"mode": "compile-only", "archs": "gfx90a,gfx1030"' "$out/hip.cert.json" ||
     ! "$T" conform --verify "$out/hip.cert.json" --plugin "$hip"; then
    cat "$out/hip.log"; note "FAILED: the hip plugin's compile-only certificate"; fail=1
else
    tail -n 2 "$out/hip.log"
fi
note "vulkan plugin on lavapipe (Mesa's Vulkan on the CPU; any Vulkan device 0 serves)"
vk="$O/libtilec-vulkan.so"
# lavapipe compiles each shader with LLVM at pipeline creation, and the
# register-unrolled ones take glslc several seconds: a wider hang guard
# than the default 120 s per item, for loaded machines
"$T" conform --plugin "$vk" --timeout 600 --cert "$out/vulkan.cert.json" --junit "$out/vulkan.xml" \
    --json "$out/vulkan.json" > "$out/vulkan.log" 2>&1
rc=$?
if [ "$rc" -eq 3 ] && [ "${TILEC_REQUIRE_VULKAN:-0}" != 1 ]; then
    note "skipped: no Vulkan device (Debian: libvulkan1 mesa-vulkan-drivers glslc)"
elif [ "$rc" -ne 0 ] || ! grep -q "CERTIFIED, certificate" "$out/vulkan.log"; then
    cat "$out/vulkan.log"; note "FAILED: the vulkan plugin did not certify"; fail=1
else
    tail -n 2 "$out/vulkan.log"
fi
[ "$fail" -eq 0 ] && note "all conformance runs as expected"
exit $fail
