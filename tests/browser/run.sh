#!/usr/bin/env bash
# run.sh BIN - the browser test (web.test.mjs) under node's test runner;
# skipped without Chromium, node or puppeteer-core: exit 77 with a message,
# which ctest reports as Skipped (SKIP_RETURN_CODE), or a failure under
# XQF_STRICT_SKIPS=1 (ops/test in CI, where ops/setup installed them all).
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../skip.sh"
skip() { xqf_skip browser "$@"; }
export XQF_BIN=${1:?usage: run.sh BIN}
for need in /usr/bin/chromium "$here/node_modules/puppeteer-core"; do
    [ -e "$need" ] || skip "$need missing (ops/setup installs it)"
done
command -v node >/dev/null || skip "node missing (ops/setup installs it)"
[ -n "${XQF_TEST_DB:-}" ] || skip "XQF_TEST_DB is not set"
cd "$here" && exec node --test --test-reporter=spec web.test.mjs
