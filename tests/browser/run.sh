#!/usr/bin/env bash
# run.sh BIN - the browser test (web.test.mjs) under node's test runner;
# skipped (exit 0, with a message) without Chromium, node or puppeteer-core.
here=$(cd "$(dirname "$0")" && pwd)
export XQF_BIN=${1:?usage: run.sh BIN}
for need in /usr/bin/chromium "$here/node_modules/puppeteer-core"; do
    [ -e "$need" ] || { echo "browser test skipped: $need missing (ops/setup installs it)"; exit 0; }
done
command -v node >/dev/null || { echo "browser test skipped: node missing (ops/setup installs it)"; exit 0; }
[ -n "${XQF_TEST_DB:-}" ] || { echo "browser test skipped: XQF_TEST_DB is not set"; exit 0; }
cd "$here" && exec node --test --test-reporter=spec web.test.mjs
