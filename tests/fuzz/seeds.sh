# tests/fuzz/seeds.sh — sourced by run.sh and replay.sh: the seed inputs of
# each harness.  Its own small corpus (tests/fuzz/corpus/NAME) plus the
# tree's existing programs and IR, so the seeds follow the language.
seeds_of() {
    case "$1" in
    frontend) echo "tests/fuzz/corpus/frontend examples tests/lang tests/malformed conformance/cases" ;;
    ir)       echo "tests/fuzz/corpus/ir tests/ir tests/lower" ;;
    *)        echo "tests/fuzz/corpus/$1" ;;
    esac
}
