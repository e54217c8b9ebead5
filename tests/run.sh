#!/bin/sh
# tests/run.sh — runs every Criterion binary given, then every example with
# `tilec run --check` on the CPU backend, then every tests/lang/ program the
# same way, and prints one summary line.
# Usage: O=build sh tests/run.sh build/tests/test_*
O=${O:-build}
# Every pass (core and lowering) also round-trips the text IR (docs/ir.md §7).
TILEC_IR_ROUNDTRIP=1
export TILEC_IR_ROUNDTRIP
pass=0
fail=0
log=$(mktemp)
for t in "$@"; do
    echo "== $t"
    "$t" --jobs 2 > "$log" 2>&1
    rc=$?
    cat "$log"
    # Count Criterion's own tests: "Synthesis: Tested: N | Passing: P | Failing: F | Crashing: C"
    syn=$(grep 'Synthesis:' "$log" | tail -n 1)
    if [ -n "$syn" ]; then
        p=$(echo "$syn" | sed 's/.*Passing: \([0-9]*\).*/\1/')
        f=$(echo "$syn" | sed 's/.*Failing: \([0-9]*\).*/\1/')
        c=$(echo "$syn" | sed 's/.*Crashing: \([0-9]*\).*/\1/')
        pass=$((pass + p))
        fail=$((fail + f + c))
    fi
    if [ $rc -ne 0 ]; then
        echo "FAILED: $t (exit status $rc)"
        [ -n "$syn" ] && [ $((f + c)) -gt 0 ] || fail=$((fail + 1))
    fi
done
rm -f "$log"
# Examples and the language tests (tests/lang/): each file may carry '# tilec-test: -D ... ' lines; one run per line
# (one run with no defines when there is none).
cache=$(mktemp -d)
for ex in examples/*.py tests/lang/*.py; do
    lines=$(grep '^# tilec-test:' "$ex" | sed 's/^# tilec-test://')
    [ -n "$lines" ] || lines=" "
    echo "$lines" | while IFS= read -r args; do
        echo "== tilec run $ex $args --check"
        # shellcheck disable=SC2086
        if TILEC_CACHE_DIR=$cache TILEC_BACKEND=cpu "$O/tilec" run "$ex" $args --check; then
            echo pass >> "$cache/.results"
        else
            echo fail >> "$cache/.results"; echo "FAILED: $ex $args"
        fi
    done
done
if [ -f "$cache/.results" ]; then
    pass=$((pass + $(grep -c '^pass' "$cache/.results")))
    fail=$((fail + $(grep -c '^fail' "$cache/.results")))
fi
# Golden IR tests (tests/ir/, docs/ir.md §7): NAME.tir with NAME.expected.
#   err_*:  `tilec compile --emit ir` exits 2, stderr is the expected diagnostic;
#   fail_*: `tilec run --check` exits 1, stderr is the expected message;
#   other:  `tilec compile --emit ir` prints the expected IR, and `tilec run
#           --check` (with each '# tilec-test:' line's arguments) passes.
for tir in tests/ir/*.tir; do
    base=${tir%.tir}
    name=$(basename "$base")
    want="$base.expected"
    got="$cache/$name.out"
    args=$(grep '^# tilec-test:' "$tir" | head -n 1 | sed 's/^# tilec-test://')
    echo "== golden $tir"
    ok=1
    case "$name" in
    err_*)
        "$O/tilec" compile "$tir" --emit ir > /dev/null 2> "$got"
        [ $? -eq 2 ] && cmp -s "$got" "$want" || ok=0 ;;
    fail_*)
        # shellcheck disable=SC2086
        TILEC_CACHE_DIR=$cache TILEC_BACKEND=cpu "$O/tilec" run "$tir" $args --check > /dev/null 2> "$got"
        [ $? -eq 1 ] && cmp -s "$got" "$want" || ok=0 ;;
    *)
        "$O/tilec" compile "$tir" --emit ir > "$got" && cmp -s "$got" "$want" || ok=0
        # shellcheck disable=SC2086
        TILEC_CACHE_DIR=$cache TILEC_BACKEND=cpu "$O/tilec" run "$tir" $args --check || ok=0 ;;
    esac
    if [ $ok -eq 1 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAILED: golden $tir"; diff "$want" "$got" | head -n 20
    fi
done
rm -rf "$cache"
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
