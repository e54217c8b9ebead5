#!/bin/sh
# tests/sanitize.sh — what `make sanitize` runs against the ASan+UBSan build
# (docs/sanitizers.md): every unit test binary given, the examples,
# tests/lang and the golden IR (tests/run.sh), the conformance suite on the
# cpu backend and the template plugin (tests/conform.sh), and the fuzz
# harnesses on their seeds and regression inputs (tests/fuzz/replay.sh).
#   SAN_KERNELS=1 (default): the cpu backend's generated kernels are built by
#       $CC, the instrumented clang, so they are checked too; 0: by cc.
#   SAN_SET=ci: what CI runs (.ci/run): kernels by cc, no test_cuda (NVRTC
#       under ASan alone takes minutes) nor test_hip (hiprtc likewise),
#       conformance on the cpu backend only.
# Usage: O=build-san CC='clang -fsanitize=...' sh tests/sanitize.sh build-san/tests/test_*
O=${O:-build-san}
here=$(pwd)
set=${SAN_SET:-full}
kernels=${SAN_KERNELS:-1}
[ "$set" = ci ] && kernels=0
[ "$kernels" = 1 ] || CC=cc
export CC
# handle_*=0: the suite crashes plugins and kernels on purpose and checks
# that the signal is reported as such; ASan's own handlers would turn every
# one into exit status 1.  allocator_may_return_null=1: tests ask for
# absurd sizes and expect a clean out-of-memory status, not an ASan abort.
ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
LSAN_OPTIONS="suppressions=$here/tests/sanitize/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
tests=""
for t in "$@"; do
    case "$set:$t" in
    ci:*/test_cuda) ;;
    # hiprtc compiles every example twice: minutes under ASan (the plugin
    # itself loads and compiles cleanly there: build-san/tilec compile)
    ci:*/test_hip) ;;
    *) tests="$tests $t" ;;
    esac
done
fail=0
t0=$(date +%s)
# shellcheck disable=SC2086
TILEC_BUILD_DIR=$(cd "$O" && pwd) O=$O sh tests/run.sh $tests || fail=1
t1=$(date +%s)
if [ "$set" = ci ]; then
    "$O/tilec" conform --backend cpu --no-cert || fail=1
else
    O=$O sh tests/conform.sh || fail=1
fi
t2=$(date +%s)
O=$O sh tests/fuzz/replay.sh frontend ir tunedb npy || fail=1
t3=$(date +%s)
echo "sanitize ($set, kernels $([ "$kernels" = 1 ] && echo instrumented || echo by cc)): tests $((t1 - t0)) s, conformance $((t2 - t1)) s, fuzz replay $((t3 - t2)) s"
[ "$fail" -eq 0 ] && echo "sanitize: ASan+UBSan clean" || echo "sanitize: FAILED"
exit $fail
