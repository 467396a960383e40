#!/usr/bin/env bash
# Fuzzes a running gateway over real sockets (tests/fuzz/sockfuzz.c): hostile
# HTTP and WebSocket clients against its own redis-server and rankcast, with a
# watchdog that fails the run on a hang (GET /healthz unanswered for 5 s) or
# a dead gateway.
#
#   bash tests/fuzz/sockfuzz.sh SECONDS [SEED]     e.g. 60 (CI), 3600 (a longer run)
#
# What it does: builds rankcast and sockfuzz with AddressSanitizer and
# UndefinedBehaviorSanitizer in build-sanitize/ (like RC_SANITIZE=1 tests/run;
# RC_BUILD_DIR picks another build dir, RANKCAST_BIN another gateway binary),
# starts redis-server on a free loopback port (never 6379) and the gateway
# with the shipped conf/rankcast.conf on another, with RANKCAST_ADMIN_KEY set
# to a fixed test key (so saved inputs replay against any run of this
# script), runs sockfuzz for SECONDS with SEED (random when not given; always
# printed), then sends SIGTERM. The run passes when the watchdog saw no hang,
# the gateway exited 0 within 10 s of SIGTERM and its output holds no
# sanitizer report.
#
# On failure everything goes to tests/artifacts/sockfuzz-SEED-TIME/: the
# gateway's log (and, for a hang, a gdb backtrace of the spinning process),
# the fuzzer's output and the inputs of the connections active around the
# failure (inputs.txt, conn-N.bin). Replay one connection exactly as the run
# sent it, or raw bytes, against a gateway of your own:
#   sockfuzz --port PORT --seed SEED --replay-conn N
#   sockfuzz --port PORT --replay DIR/conn-N.bin ...
# Everything listens and connects on 127.0.0.0/8 only (the watchdog from
# 127.0.0.2, so the per-address limits the fuzz traffic meets never block it);
# every wait is bounded; whatever this starts is stopped on exit (trap).
# SOCKFUZZ_ARGS adds sockfuzz options, e.g. "--kinds ws-valid,ws-hostile" to
# fuzz around a known bug while it is being fixed (sockfuzz --help).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

usage() { echo "usage: bash tests/fuzz/sockfuzz.sh SECONDS [SEED]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
secs="$1"
[[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -ge 1 ] || usage
seed="${2:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
[[ "$seed" =~ ^[0-9]+$ ]] || usage
echo "sockfuzz.sh: seed $seed (replay: bash tests/fuzz/sockfuzz.sh $secs $seed)"

# ---- build -------------------------------------------------------------------------------------
build="${RC_BUILD_DIR:-build-sanitize}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DRC_WERROR=ON \
    "-DCMAKE_C_FLAGS=-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" > /dev/null
fi
targets=(sockfuzz)
[ -n "${RANKCAST_BIN:-}" ] || targets+=(rankcast)
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" > /dev/null
[[ "$build" = /* ]] || build="$root/$build"
gw_bin="${RANKCAST_BIN:-$build/gateway/rankcast}"
fuzz_bin="$build/tests/fuzz/sockfuzz"
[ -x "$gw_bin" ] || { echo "sockfuzz.sh: no gateway binary at $gw_bin" >&2; exit 2; }
if grep -q 'fsanitize=address' "$build/CMakeCache.txt" 2> /dev/null || [ -n "${RANKCAST_BIN:-}" ]; then
  echo "sockfuzz.sh: gateway $gw_bin"
else
  echo "sockfuzz.sh: gateway $gw_bin (note: $build is not a sanitizer build)"
fi

# ---- processes and cleanup ----------------------------------------------------------------------
work="$(mktemp -d /tmp/rankcast-sockfuzz.XXXXXX)"
redis_pid=""
gw_pid=""
cleanup() {
  if [ -n "$gw_pid" ] && kill -0 "$gw_pid" 2> /dev/null; then
    kill -KILL "$gw_pid" 2> /dev/null || true
    wait "$gw_pid" 2> /dev/null || true
  fi
  if [ -n "$redis_pid" ] && kill -0 "$redis_pid" 2> /dev/null; then
    kill "$redis_pid" 2> /dev/null || true
    wait "$redis_pid" 2> /dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A loopback port nothing listens on, below the ephemeral range, never 6379.
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 12000))
    [ "$p" = 6379 ] && continue
    [ "$p" = "${1:-}" ] && continue
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

# 1 while the process runs (a zombie has stopped running)
running() { [ -r "/proc/$1/stat" ] && ! awk '{ sub(/.*\) /, ""); exit !($1 == "Z" || $1 == "X") }' "/proc/$1/stat"; }

redis_port="$(free_port)" || { echo "sockfuzz.sh: no free port" >&2; exit 2; }
gw_port="$(free_port "$redis_port")" || { echo "sockfuzz.sh: no free port" >&2; exit 2; }

redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --logfile "$work/redis.log" &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$redis_port" ping > /dev/null 2>&1 && break; sleep 0.05; done
redis-cli -p "$redis_port" ping > /dev/null 2>&1 || { echo "sockfuzz.sh: redis-server did not start" >&2; exit 2; }

export RANKCAST_ADMIN_KEY="rankcast-sockfuzz-admin-0123456789"
mkdir -p "$work/state"
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
  "$gw_bin" --config conf/rankcast.conf --listen "127.0.0.1:$gw_port" --redis "127.0.0.1:$redis_port" \
  --state "$work/state" > "$work/gateway.log" 2>&1 &
gw_pid=$!

# ---- the run -------------------------------------------------------------------------------------
failures=()
set +e
# shellcheck disable=SC2086 # SOCKFUZZ_ARGS is a list of options
timeout -k 5 $((secs + 90)) "$fuzz_bin" --port "$gw_port" --seed "$seed" --seconds "$secs" --pid "$gw_pid" \
  --dump "$work/inputs" ${SOCKFUZZ_ARGS:-} 2>&1 | tee "$work/sockfuzz.out"
fuzz_rc=${PIPESTATUS[0]}
set -e
case "$fuzz_rc" in
  0) ;;
  1) failures+=("$(grep -m1 -oP 'FAIL.*?: \K.*' "$work/sockfuzz.out" || echo 'sockfuzz failed')") ;;
  124|137) failures+=("sockfuzz itself did not finish in time") ;;
  *) failures+=("sockfuzz exited $fuzz_rc") ;;
esac

# A gateway that hangs: where it spins, before it is stopped.
if running "$gw_pid" && grep -q 'hang' "$work/sockfuzz.out" && command -v gdb > /dev/null; then
  timeout 60 gdb -p "$gw_pid" -batch -ex 'thread apply all bt' > "$work/gateway-hang-bt.txt" 2>&1 || true
  echo "sockfuzz.sh: the hung gateway's main thread (every thread in gateway-hang-bt.txt):"
  sed -n '/^Thread 1 /,$p' "$work/gateway-hang-bt.txt" | grep -E '^#' | cut -c1-160 | head -n 20 || true
fi

# The gateway must stop cleanly: SIGTERM, exit 0 within 10 s.
gw_rc=""
if running "$gw_pid"; then
  kill -TERM "$gw_pid"
  for _ in $(seq 100); do running "$gw_pid" || break; sleep 0.1; done
  if running "$gw_pid"; then
    failures+=("the gateway did not exit within 10 s of SIGTERM")
    kill -KILL "$gw_pid" 2> /dev/null || true
  fi
fi
set +e
wait "$gw_pid" 2> /dev/null
gw_rc=$?
set -e
gw_pid=""
if [ "$gw_rc" -gt 128 ]; then
  failures+=("the gateway was ended by signal $((gw_rc - 128))")
elif [ "$gw_rc" != 0 ]; then
  failures+=("the gateway exited with status $gw_rc")
fi
if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer' \
    "$work/gateway.log"; then
  failures+=("sanitizer report in the gateway's output")
  grep -m3 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY:' "$work/gateway.log" | sed 's/^/    /'
fi

if [ ${#failures[@]} -eq 0 ]; then
  echo "sockfuzz.sh: pass (seed $seed, ${secs}s)"
  exit 0
fi

art="$root/tests/artifacts/sockfuzz-$seed-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$art"
cp -r "$work/gateway.log" "$work/redis.log" "$work/sockfuzz.out" "$art/" 2> /dev/null || true
[ -d "$work/inputs" ] && cp -r "$work/inputs" "$art/"
[ -f "$work/gateway-hang-bt.txt" ] && cp "$work/gateway-hang-bt.txt" "$art/"
echo "sockfuzz.sh: FAIL (seed $seed):"
for f in "${failures[@]}"; do echo "  - $f"; done
echo "sockfuzz.sh: gateway log, fuzzer output and last inputs in ${art#"$root"/}"
echo "sockfuzz.sh: gateway log tail:"
tail -n 15 "$work/gateway.log" | sed 's/^/    /'
exit 1
