#!/usr/bin/env bash
# Runs the Node tests: unit tests of web/rankcast.js, the harness self-test,
# the gateway end-to-end tests, the browser test and the chaos checker's
# self-test (tests/chaos/checker.test.js).
#   bash tests/e2e/run.sh                     every *.test.js under tests/e2e, tests/browser, tests/chaos
#                                             ($RC_TEST_JOBS files at a time, then the load suites alone)
#   bash tests/e2e/run.sh FILE.test.js ...    just those, one at a time
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

# The sanitizer pass (RC_SANITIZE set, .ci/run's second pass) leaves out the
# suites whose worth is load, not new code paths, and which cost minutes under
# ASan: the floods (stuck_readers, hostile_flood, hostile_read_flood,
# hostile_boards, hostile_link: 105 s under ASan in a fresh-clone run), the 3+3 Redis Cluster suites (cluster*.test.js) and
# valgrind.test.js (valgrind cannot run a sanitized binary), and
# package.test.js (it packages and installs the build: the first pass's is the
# one that ships), rankcast_types.test.js, rankcast_module.test.js and
# security_doc.test.js (tsc over web/rankcast.d.ts, the built client, the
# docs: no gateway, the same answer in both passes), and the chaos checker's
# self-test against broken builds (tests/chaos/selftest: three short chaos
# runs; it tests the checker, not the gateway), the chaos checker's unit
# tests (no gateway) and the browser tests (tests/browser: they check the
# pages; the gateway paths they drive are the e2e suites', which do run under
# the sanitizer). The first pass runs them all; name a file to run it under
# the sanitizer anyway.
sanitize_skip='(/(stuck_readers|hostile_flood|hostile_read_flood|hostile_boards|hostile_link|cluster[a-z_]*|valgrind|package|rankcast_types|rankcast_module|security_doc)|/tests/browser/[^/]+|/tests/chaos/[^/]+)\.test\.js$'
# Suites that load the machine on purpose (the floods, a Redis backlog, the
# 3+3 cluster suites, valgrind, the chaos self-test's three runs) or that
# judge a link under that load: they run after the others, one file at a
# time, with nothing beside them. Every other file is mostly waiting (a Redis
# round trip, a tick, a test clock; about a third of a core on average), so
# $RC_TEST_JOBS of them (default 3) run at once: the whole run takes about
# half the time, and no file shares the machine with a load suite.
alone_re='(/(stuck_readers|hostile_flood|hostile_read_flood|hostile_boards|hostile_link|redis_backlog|cluster[a-z_]*|valgrind)|/tests/chaos/selftest)\.test\.js$'
jobs="${RC_TEST_JOBS:-3}"
case "$jobs" in ''|*[!0-9]*|0) echo "RC_TEST_JOBS must be a positive number" >&2; exit 2;; esac
if [ $# -eq 0 ]; then
    # (tests/chaos: the checker's self-tests are the *.test.js there; the
    # chaos run itself is tests/chaos/run.sh)
    mapfile -t files < <(find "$here" "$root/tests/browser" "$root/tests/chaos" -name '*.test.js' \
        -not -path '*/node_modules/*' | sort)
    if [ -n "${RC_SANITIZE:-}" ]; then
        mapfile -t left < <(printf '%s\n' "${files[@]}" | grep -E "$sanitize_skip")
        mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -v -E "$sanitize_skip")
        echo "sanitizer pass: not run again: ${left[*]##*/}"
    fi
    mapfile -t alone < <(printf '%s\n' "${files[@]}" | grep -E "$alone_re" || true)
    mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -v -E "$alone_re")
    # --test-timeout: a test that sets no timeout of its own fails after 5
    # minutes (a hang fails that test, not the whole CI budget); the slowest
    # test takes about 1 minute on a 2-core machine.
    rc=0
    # (never node --test without files: it would look for tests itself)
    if [ "${#files[@]}" -gt 0 ]; then
        echo "node tests: ${#files[@]} files, $jobs at a time"
        node --test --test-concurrency="$jobs" --test-timeout=300000 "${files[@]}" || rc=$?
    fi
    if [ "${#alone[@]}" -gt 0 ]; then
        echo "node tests: ${#alone[@]} load suites, one at a time: ${alone[*]##*/}"
        node --test --test-concurrency=1 --test-timeout=300000 "${alone[@]}" || rc=$?
    fi
    exit "$rc"
fi
# files named: one at a time
exec node --test --test-concurrency=1 --test-timeout=300000 "$@"
