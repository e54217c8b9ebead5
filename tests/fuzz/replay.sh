#!/bin/sh
# tests/fuzz/replay.sh — make test's share of the fuzzing (docs/sanitizers.md):
# each harness, linked without libFuzzer ($O/fuzz/replay_NAME), runs every
# seed (tests/fuzz/seeds.sh) and every input that once failed,
# tests/fuzz/regress/NAME.  Usage: O=build sh tests/fuzz/replay.sh frontend ir ...
O=${O:-build}
. tests/fuzz/seeds.sh
fail=0
total=0
log=$(mktemp)
for t in "$@"; do
    dirs=""
    for d in $(seeds_of "$t") tests/fuzz/regress/$t; do
        [ -d "$d" ] && dirs="$dirs $d"
    done
    # shellcheck disable=SC2086
    if "$O/fuzz/replay_$t" $dirs > "$log" 2>&1; then
        n=$(sed -n 's/^replay: \([0-9]*\) input(s).*/\1/p' "$log")
        total=$((total + n))
        echo "fuzz replay $t: $n inputs"
    else
        tail -n 30 "$log"
        echo "FAILED: fuzz replay $t (the input named last above)"
        fail=1
    fi
done
rm -f "$log"
echo "fuzz replay: $total inputs, $([ $fail -eq 0 ] && echo ok || echo FAILED)"
exit $fail
