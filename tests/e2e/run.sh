#!/usr/bin/env bash
# Runs the Node tests: unit tests of web/rankcast.js, the harness self-test,
# the gateway end-to-end tests and the browser test.
#   bash tests/e2e/run.sh                     every *.test.js under tests/e2e and tests/browser
#   bash tests/e2e/run.sh FILE.test.js ...    just those
# Installs the pinned packages (npm ci) when node_modules is missing or the
# lockfile changed since the last install. Exits non-zero when a test fails.
# Tests needing the gateway use $RANKCAST_BIN (default build/gateway/rankcast)
# and skip when it has not been built (or a tool they need is missing), except
# with CI=true (as .ci/run sets it), where that fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

# npm's own node_modules/.package-lock.json has another format, so keep a copy
# of the lockfile that was installed and compare against it.
stamp="$here/node_modules/.rankcast-installed-lock.json"
if [ ! -d "$here/node_modules" ] || ! cmp -s "$here/package-lock.json" "$stamp"; then
    (cd "$here" && npm ci --no-audit --no-fund)
    cp "$here/package-lock.json" "$stamp"
fi

if [ $# -eq 0 ]; then
    mapfile -t files < <(find "$here" "$root/tests/browser" -name '*.test.js' \
        -not -path '*/node_modules/*' | sort)
    set -- "${files[@]}"
fi
exec node --test "$@"
