#!/usr/bin/env bash
# The chaos run (issue 25): writers, viewers and faults overlapping against two
# gateways (one with --workers 2), first on a single Redis, then on a 3+3 Redis
# Cluster with ack_replicas = 1, each for half of MINUTES; then the offline
# checker over each recorded history (docs/reliability.md).
#   bash tests/chaos/run.sh MINUTES [SEED]
# SEED (default: random, printed) decides every choice of the run. The
# histories are kept in $CHAOS_OUT (default: a temp dir, printed). Exits
# non-zero when the checker finds a violation or the run itself fails.
# Uses $RANKCAST_BIN (default build/gateway/rankcast); loopback only.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
minutes="${1:?usage: tests/chaos/run.sh MINUTES [SEED]}"
seed="${2:-$(( (RANDOM << 15 | RANDOM) ))}"
case "$minutes" in ''|*[!0-9.]*) echo "MINUTES must be a number" >&2; exit 2;; esac
# RC_SANITIZE=1: the ASan + UBSan build (build-sanitize/, as RC_SANITIZE=1
# tests/run makes it); a sanitizer report fails the run (checker: gwexit)
if [ -n "${RC_SANITIZE:-}" ]; then
    export RANKCAST_BIN="${RANKCAST_BIN:-$root/build-sanitize/gateway/rankcast}"
fi
export RANKCAST_BIN="${RANKCAST_BIN:-$root/build/gateway/rankcast}"
[ -x "$RANKCAST_BIN" ] || { echo "chaos: no gateway at $RANKCAST_BIN (build it first)" >&2; exit 2; }
out="${CHAOS_OUT:-$(mktemp -d /tmp/rankcast-chaos-XXXXXX)}"
mkdir -p "$out"
seconds=$(awk -v m="$minutes" 'BEGIN { s = int(m * 30); if (s < 20) s = 20; print s }')
quiet=$(( seconds < 90 ? seconds / 3 : 30 ))
echo "chaos: seed $seed, ${seconds}s single Redis + ${seconds}s cluster, histories in $out"
rc=0
for mode in single cluster; do
    hist="$out/$mode-$seed.jsonl"
    run_rc=0
    # bounded: the run's own waits are bounded, and this bounds the rest (a
    # TERM makes tests/e2e/harness.js kill every process the run started)
    # every gateway's log goes to $out/MODE-SEED.gw.log (RANKCAST_E2E_VERBOSE:
    # tests/e2e/harness.js echoes each line as "[rankcast:PORT] ..."), the
    # run's own messages to the terminal as before
    RANKCAST_E2E_VERBOSE=1 timeout -k 15s "$((seconds + 300))s" node "$here/chaos.js" --mode "$mode" --seconds "$seconds" --seed "$seed" \
        --quiet-every "$quiet" --out "$hist" \
        2> >(tee "$out/$mode-$seed.gw.log" | grep --line-buffered -v '^\[rankcast:' >&2) || run_rc=$?
    echo "chaos ($mode, seed $seed):"
    node "$here/checker.js" "$hist" || rc=1
    [ "$run_rc" = 0 ] || { echo "chaos: the $mode run failed (exit $run_rc)"; rc=1; }
done
[ "$rc" = 0 ] && echo "chaos: passed (seed $seed)" || echo "chaos: FAILED (seed $seed; histories in $out)"
exit "$rc"
