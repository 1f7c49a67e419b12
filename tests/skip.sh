# skip.sh - sourced by the test scripts: xqf_skip NAME REASON... ends the
# script as ctest's Skipped (exit 77, SKIP_RETURN_CODE) after saying why,
# the line appended to $XQF_SKIP_LOG when set (ops/test lists them at its
# end); under XQF_STRICT_SKIPS=1 (ops/test in CI, where ops/setup installed
# every dependency) a skip is a failure instead (exit 1).  suite.sh does the
# same for Criterion suites.
xqf_skip() {
    local name=$1
    shift
    echo "$name: skipped: $*"
    if [ -n "${XQF_SKIP_LOG:-}" ]; then
        echo "$name $*" >> "$XQF_SKIP_LOG"
    fi
    if [ "${XQF_STRICT_SKIPS:-0}" = 1 ]; then
        echo "$name: a skip is a failure here (XQF_STRICT_SKIPS=1: ops/setup installs what it needs)"
        exit 1
    fi
    exit 77
}
