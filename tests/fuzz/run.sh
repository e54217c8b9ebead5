#!/bin/sh
# tests/fuzz/run.sh — make fuzz (docs/sanitizers.md): each libFuzzer harness
# ($O/fuzz/fuzz_NAME) runs FUZZ_TIME seconds on its seeds
# (tests/fuzz/seeds.sh) with its dictionary (tests/fuzz/NAME.dict).  New
# corpus entries go to $O/fuzz/corpus-NAME (never into the tree); a crash,
# a broken round trip, a leak or a timeout is saved in
# $O/fuzz/findings/NAME/ — copy it to tests/fuzz/regress/NAME/ once fixed.
# Prints executions, rate and coverage per harness.
# Usage: O=build-fuzz FUZZ_TIME=60 sh tests/fuzz/run.sh frontend ir ...
O=${O:-build-fuzz}
T=${FUZZ_TIME:-60}
. tests/fuzz/seeds.sh
out="$O/fuzz"
fail=0
# Budgets: a 10 s input is a hang; more than 2 GiB is a memory bug.
ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS
for t in "$@"; do
    mkdir -p "$out/corpus-$t" "$out/findings/$t"
    dict=""
    [ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
    seeds=""
    for d in $(seeds_of "$t") "tests/fuzz/regress/$t"; do
        [ -d "$d" ] && seeds="$seeds $d"
    done
    # shellcheck disable=SC2086
    "$out/fuzz_$t" -max_total_time="$T" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 $dict -artifact_prefix="$out/findings/$t/" \
        "$out/corpus-$t" $seeds > "$out/$t.log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$t.log")
    cov=$(grep -o 'cov: [0-9]*' "$out/$t.log" | tail -n 1)
    ft=$(grep -o 'ft: [0-9]*' "$out/$t.log" | tail -n 1)
    echo "fuzz $t: ${execs:-?} inputs in ${T}s (${rate:-?}/s), $cov $ft, corpus $(ls "$out/corpus-$t" | wc -l) new"
    if [ $rc -ne 0 ]; then
        grep -A 30 -m 1 'ERROR\|==[0-9]*==\|fuzz: property' "$out/$t.log" | head -n 40
        echo "FAILED: fuzz $t (input saved in $out/findings/$t/)"
        fail=1
    fi
done
exit $fail
