#!/bin/sh
# tests/diff/run.sh — differential runs of random tile programs
# (tests/diff/gen.py): each seed's program runs with `tilec run --check` on
# each backend named, the reference interpreter as the oracle.  A backend
# whose `tilec devices` line is not `ok` is skipped and said so (an error
# when TILEC_REQUIRE_<NAME>=1).  Anything but PASS (a FAIL, a compile or
# launch error, a crash, a diagnostic for a generated program) is a finding:
# the program is kept in $O/diff/findings/ with the command that failed.
# make test runs DIFF_COUNT=7 (one program of each kind) per backend;
# make fuzz runs DIFF_COUNT=200 from DIFF_FIRST.
# Usage: O=build DIFF_COUNT=N DIFF_FIRST=S sh tests/diff/run.sh cpu opencl ...
O=${O:-build}
count=${DIFF_COUNT:-7}
first=${DIFF_FIRST:-0}
out="$O/diff"
mkdir -p "$out/findings"
cache=$(mktemp -d)
fail=0
for b in "$@"; do
    if ! "$O/tilec" devices 2>/dev/null | grep -q "^$b  *ok "; then
        req=$(eval echo "\${TILEC_REQUIRE_$(echo "$b" | tr a-z A-Z):-0}")
        if [ "$req" = 1 ]; then
            echo "FAILED: diff $b: backend not available and TILEC_REQUIRE_$(echo "$b" | tr a-z A-Z)=1"; fail=1
        else
            echo "diff $b: skipped (backend not available)"
        fi
        continue
    fi
    pass=0
    bad=0
    s=$first
    while [ "$s" -lt $((first + count)) ]; do
        f="$out/seed$s.py"
        python3 tests/diff/gen.py "$s" -o "$f" 2>/dev/null || { echo "FAILED: gen.py $s"; fail=1; s=$((s + 1)); continue; }
        if TILEC_CACHE_DIR=$cache timeout 300 "$O/tilec" run "$f" --check --backend "$b" --seed "$s" \
                > "$out/last.log" 2>&1 && grep -q PASS "$out/last.log"; then
            pass=$((pass + 1))
        else
            rc=$?
            bad=$((bad + 1))
            keep="$out/findings/${b}_seed$s.py"
            cp "$f" "$keep"
            echo "FAILED: diff $b seed $s ($(sed -n '1s/.*(\(.*\))/\1/p' "$f")): tilec run $keep --check --backend $b --seed $s"
            tail -n 5 "$out/last.log"
        fi
        s=$((s + 1))
    done
    echo "diff $b: $pass of $count random programs pass (seeds $first..$((first + count - 1)))"
    [ "$bad" -eq 0 ] || fail=1
done
rm -rf "$cache"
exit $fail
