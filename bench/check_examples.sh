# bench/check_examples.sh — sourced by the device scripts (opencl_nvidia.sh,
# vulkan_nvidia.sh): check_examples BACKEND FILE runs every example at each
# of its `# tilec-test:` parameter lines with --check on BACKEND, writes one
# line per run to FILE (with the last 30 lines of output for a failure),
# prints the failures and a count, and leaves the counts in $pass, $fail and
# $ns (not supported: the host refused a kernel of a newer tile IR than the
# plugin reads, exit status 3 -- as the unit tests count it).
check_examples() {
    be=$1
    file=$2
    : > "$file"
    pass=0
    fail=0
    ns=0
    for ex in examples/*.py; do
        lines=$(grep '^# tilec-test:' "$ex" | sed 's/^# tilec-test://')
        [ -n "$lines" ] || lines=" "
        # the here-document keeps the loop in this shell (counters survive)
        while IFS= read -r args; do
            # shellcheck disable=SC2086
            res=$(build/tilec run "$ex" $args --check --backend "$be" 2>&1)
            rc=$?
            if [ $rc -eq 0 ]; then
                pass=$((pass + 1))
            elif [ $rc -eq 3 ] && echo "$res" | grep -q "backend '$be' reads tile IR"; then
                ns=$((ns + 1))
                rc=ns
            else
                fail=$((fail + 1))
            fi
            printf '%s [%s] rc=%s %s\n' "$ex" "$args" $rc "$(echo "$res" | tail -n 1)" >> "$file"
            [ "$rc" = 0 ] || [ "$rc" = ns ] || echo "$res" | tail -n 30 >> "$file"
        done <<EOF
$lines
EOF
    done
    grep -v ' rc=0 ' "$file" | grep -v ' rc=ns ' | head -n 60
    echo "check: $pass passed, $fail failed, $ns not supported (newer tile IR)"
}
