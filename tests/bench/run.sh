#!/usr/bin/env bash
# The benchmark runner (issue 6): one command, its own Redis and gateway, a
# fixed matrix, one table.
#
#   bash tests/bench/run.sh            the full matrix (about 5 minutes); writes BENCHMARKS.md
#   bash tests/bench/run.sh --smoke    every case at toy size (about 20 s, CI); writes nothing
#                                      in the repo, fails only when the tool or the gateway is
#                                      broken (never on speed)
#   options: --out FILE       where the full run writes its report (default BENCHMARKS.md;
#                             the hand-written analysis at its end is kept)
#            --only A,B,...   run only these cases (A fan-out, B boards, C throughput,
#                             D idle connections, E burst, K the fan-out knee: case A's
#                             write rate with 250..5,000 viewers); the report has only those
#            --tick MS        the gateway's coalescing tick for this run (default: as shipped,
#                             50 ms); the latency targets follow it (tick + 20 ms)
#   environment: RC_BUILD_DIR (default build), RC_BENCH_KEEP=1 keeps the work directory
#                (every JSON line, the logs, the generated config) and prints where,
#                RC_BENCH_COMMIT names the source in the report when this is not a git
#                checkout (an exported tree)
#
# What it does: builds rankcast and rankcast-bench, starts redis-server on a free
# loopback port (never 6379) and the gateway with a generated copy of
# conf/rankcast.conf (write and read rate limits, max_pending, max_conns and
# max_conns_per_ip raised (a paced writer with 150 ms acks has 75 writes in
# flight, past the shipped max_pending of 64), idle_timeout 1d; queue_bytes and tick as shipped), then:
#   ceiling  one write through the gateway is captured with MONITOR, so the
#            EVALSHA line is exactly what the gateway sends (its SHA is checked
#            against SCRIPT LOAD of lua/write.lua); the gateway is stopped and
#            redis-benchmark runs that EVALSHA with __rand_int__ members at the
#            concurrency of case C (and once pipelined, for context); the
#            gateway is started again
#   A..E, K  the cases (see BENCHMARKS.md, "Method"), each one rankcast-bench
#            run (D: several at once)
# and hands their JSON lines to tests/bench/report.js, which prints the table
# and writes the report. Everything listens and connects on 127.0.0.0/8 only;
# every wait is bounded; whatever it started is stopped on exit (trap), also
# on Ctrl-C.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
self="$root/tests/bench/run.sh"
cd "$root"

smoke=0
tick_ms=""
out="$root/BENCHMARKS.md"
only="A,B,C,D,E,K"
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --out) out="$2"; shift ;;
    --only) only="$2"; shift ;;
    --tick) tick_ms="$2"; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$self"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
want() { [[ ",$only," == *",$1,"* ]]; }

build="${RC_BUILD_DIR:-build}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
fi
cmake --build "$build" -j "$(nproc)" --target rankcast rankcast-bench > /dev/null
gw_bin="$root/$build/gateway/rankcast"
bench_bin="$root/$build/tests/bench/rankcast-bench"
[[ "$build" = /* ]] && gw_bin="$build/gateway/rankcast" && bench_bin="$build/tests/bench/rankcast-bench"

work="$(mktemp -d /tmp/rankcast-bench.XXXXXX)"
redis_pid=""
gw_pid=""
bench_pids=()
cleanup() {
  local p
  for p in "${bench_pids[@]}"; do kill "$p" 2> /dev/null || true; done
  [ -n "$gw_pid" ] && { kill "$gw_pid" 2> /dev/null; wait "$gw_pid" 2> /dev/null; } || true
  [ -n "$redis_pid" ] && { kill "$redis_pid" 2> /dev/null; wait "$redis_pid" 2> /dev/null; } || true
  if [ "${RC_BENCH_KEEP:-}" = 1 ]; then echo "run.sh: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "run.sh: $*" >&2; [ -f "$work/gateway.log" ] && tail -n 20 "$work/gateway.log" >&2; exit 1; }

# A loopback port nothing listens on, below the ephemeral range (the bench's
# own outgoing connections use that), never 6379.
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 12000))
    [ "$p" = 6379 ] && continue
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

key="rankcast-bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export RANKCAST_ADMIN_KEY="$key"
run_id="$(date +%H%M%S)"

# ---- Redis -------------------------------------------------------------------------------
redis_port="$(free_port)" || die "no free port"
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --logfile "$work/redis.log" &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$redis_port" ping > /dev/null 2>&1 && break; sleep 0.05; done
redis-cli -p "$redis_port" ping > /dev/null 2>&1 || die "redis-server did not start on $redis_port"
rcli() { redis-cli -p "$redis_port" "$@"; }

# ---- the gateway ---------------------------------------------------------------------------
# The shipped config with the limits a load test needs: no write or read
# rate limit to speak of, no cap on requests waiting per connection
# (max_pending), every connection the fd limit allows (max_conns = auto) from
# any one address, no idle hang-up. Everything else (tick, queue_bytes,
# boards) as shipped.
conf="$work/rankcast.conf"
sed -E '/^(max_conns|max_conns_per_ip|idle_timeout|conn_write_rate|conn_write_burst|key_write_rate|key_write_burst|conn_read_rate|conn_read_burst|ip_read_rate|ip_read_burst|max_pending)[[:space:]]*=/d' \
  conf/rankcast.conf | awk '{ print } /^\[limits\]/ { print "max_conns = auto\nmax_conns_per_ip = 1000000\nidle_timeout = 1d\nconn_write_rate = 1000000\nconn_write_burst = 10000000\nkey_write_rate = 1000000\nkey_write_burst = 10000000\nconn_read_rate = 1000000\nconn_read_burst = 10000000\nip_read_rate = 1000000\nip_read_burst = 10000000\nmax_pending = 100000" }' > "$conf"
if [ -n "$tick_ms" ]; then
  [[ "$tick_ms" =~ ^[0-9]+$ ]] || die "--tick takes milliseconds"
  sed -i -E "s/^tick[[:space:]]*=.*/tick = ${tick_ms}ms/" "$conf"
fi
tick_ms="$(sed -nE 's/^tick[[:space:]]*=[[:space:]]*([0-9]+)ms.*/\1/p' "$conf")"
[ -n "$tick_ms" ] || die "cannot read the tick (in ms) from the config"
"$gw_bin" --check-config "$conf" > /dev/null || die "generated config refused"
gw_port="$(free_port)" || die "no free port"

start_gateway() {
  "$gw_bin" --config "$conf" --listen "127.0.0.1:$gw_port" --redis "127.0.0.1:$redis_port" \
    --state "$work/state" >> "$work/gateway.log" 2>&1 &
  gw_pid=$!
  for _ in $(seq 100); do
    curl -fs "http://127.0.0.1:$gw_port/healthz" > /dev/null 2>&1 && return 0
    kill -0 "$gw_pid" 2> /dev/null || break
    sleep 0.1
  done
  die "the gateway did not come up"
}
stop_gateway() {
  kill "$gw_pid" 2> /dev/null || true
  for _ in $(seq 100); do kill -0 "$gw_pid" 2> /dev/null || break; sleep 0.1; done
  kill -9 "$gw_pid" 2> /dev/null || true
  wait "$gw_pid" 2> /dev/null || true
  gw_pid=""
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
start_gateway

# ---- machine and versions --------------------------------------------------------------------
{
  echo "nproc=$(nproc)"
  echo "cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
  echo "mem_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
  echo "kernel=$(uname -r)"
  echo "os=$( . /etc/os-release 2> /dev/null && echo "$PRETTY_NAME")"
  echo "redis=$(redis-server --version | sed -E 's/.*v=([^ ]+).*/\1/')"
  echo "lws=$(pkg-config --modversion libwebsockets | sed 's/-$//') (package $(dpkg-query -W -f '${Version}' libwebsockets-dev 2> /dev/null || echo '?'))"
  echo "libuv=$(pkg-config --modversion libuv)"
  echo "hiredis=$(pkg-config --modversion hiredis)"
  echo "gcc=$(gcc -dumpfullversion)"
  echo "build_type=$(awk -F= '/^CMAKE_BUILD_TYPE:/ { print $2 }' "$build/CMakeCache.txt")"
  if [ -n "${RC_BENCH_COMMIT:-}" ]; then
    echo "commit=$RC_BENCH_COMMIT"
  elif git rev-parse --short HEAD > /dev/null 2>&1; then
    echo "commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- core gateway lua || echo ' + uncommitted changes in core/, gateway/ or lua/')"
  else
    echo "commit=unknown (not a git checkout)"
  fi
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "tick_ms=$tick_ms"
  echo "queue_bytes=256k (shipped default)"
  echo "smoke=$smoke"
} > "$work/meta.env"

# Sizes: the matrix of issue 6, or a toy version of it for the CI smoke.
if [ "$smoke" = 1 ]; then
  A_viewers=200;  A_rate=500;   A_dur=2
  B_viewers=100;  B_boards=10;  B_rate=1000; B_dur=2
  C_writers=8;    C_dur=2;      C_n=5000;   C_rounds=1
  D_procs=2;      D_per=100;    D_hold=3
  E_viewers=100;  E_writes=2000
  K_viewers="";   K_dur=2
  conc=100
else
  A_viewers=10000; A_rate=2000;  A_dur=20
  B_viewers=1000;  B_boards=100; B_rate=10000; B_dur=20
  C_writers=64;    C_dur=8;      C_n=150000; C_rounds=3
  D_procs=4;       D_per=4750;   D_hold=25
  E_viewers=5000;  E_writes=20000
  K_viewers="250 500 1000 2000 5000"; K_dur=10
  conc=200
fi

echo "A_rate=$A_rate" >> "$work/meta.env"

bench() { # bench NAME args... : one rankcast-bench run, JSON into $work/NAME.json
  local name="$1"
  shift
  echo "run.sh: case $name: rankcast-bench $*" >&2
  echo "load_$name=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
  timeout 300 "$bench_bin" --port "$gw_port" --gateway-pid "$gw_pid" --label "$name" --connect-concurrency "$conc" \
    "$@" > "$work/$name.json" 2> "$work/$name.log" || {
    local rc=$?
    tail -n 5 "$work/$name.log" >&2
    # A broken run has no numbers worth a table (124: timeout, 2: fatal)
    die "rankcast-bench $name exited $rc"
  }
  [ -s "$work/$name.json" ] || die "rankcast-bench $name wrote no result"
  kill -0 "$gw_pid" 2> /dev/null || die "the gateway died during case $name"
}

# ---- ceiling: redis-benchmark running the gateway's own EVALSHA ------------------------------
# The gateway's own EVALSHA for one incr, captured with MONITOR (so its keys
# and ARGV are exactly what the gateway sends), with the member turned into
# __rand_int__ for redis-benchmark: sets the array evalsha.
capture_evalsha() {
  member="u:ceiling0"
  timeout 5 redis-cli -p "$redis_port" monitor > "$work/monitor.txt" 2>&1 &
  mon_pid=$!
  sleep 0.3
  curl -fs -H "Authorization: Bearer $key" -X POST "http://127.0.0.1:$gw_port/api/v1/boards/match:ceil$run_id/scores" \
    -d "{\"member\":\"$member\",\"op\":\"incr\",\"delta\":1}" > /dev/null || die "the capture write failed"
  for _ in $(seq 50); do grep -q '"EVALSHA"' "$work/monitor.txt" && break; sleep 0.05; done
  kill "$mon_pid" 2> /dev/null || true
  wait "$mon_pid" 2> /dev/null || true
  grep -m1 '"EVALSHA"' "$work/monitor.txt" > "$work/evalsha.txt" || die "no EVALSHA seen by MONITOR"
  # MONITOR quotes each argument; split them (NUL-separated) and vary the member
  # (process substitution hides node's exit status: the checks below catch an empty capture)
  mapfile -d '' evalsha < <(node "$root/tests/bench/report.js" monitor-args "$work/evalsha.txt" "$member" "u:__rand_int__")
  # Without a real EVALSHA command, redis-benchmark would run its default
  # tests and their last CSV line would pass for the ceiling: stop instead.
  [ "${#evalsha[@]}" -ge 3 ] || die "the EVALSHA capture came back empty ($(wc -c < "$work/evalsha.txt") bytes seen)"
  [ "${evalsha[0]^^}" = EVALSHA ] || die "the captured command is ${evalsha[0]}, not EVALSHA"
  [[ "${evalsha[1]}" =~ ^[0-9a-f]{40}$ ]] || die "the captured EVALSHA has no SHA1 (${evalsha[1]})"
  [[ "${evalsha[*]}" == *"u:__rand_int__"* ]] || die "the captured EVALSHA does not name the member $member"
  file_sha="$(rcli -x script load < lua/write.lua)" || die "SCRIPT LOAD of lua/write.lua failed"
  [[ "$file_sha" =~ ^[0-9a-f]{40}$ ]] || die "SCRIPT LOAD of lua/write.lua answered '$file_sha'"
  echo "script_sha_matches=$([ "${evalsha[1]}" = "$file_sha" ] && echo yes || echo "no (gateway ${evalsha[1]}, lua/write.lua $file_sha)")" >> "$work/meta.env"
  printf '%s\n' "${evalsha[*]}" > "$work/C-ceiling.cmd"
}

# ---- the cases -----------------------------------------------------------------------------
if want A; then
  bench A --viewers "$A_viewers" --boards "match:A$run_id" --view top:10 --writers 4 \
    --rate "$A_rate" --duration "$A_dur" --settle 5
fi
if want B; then
  bench B --viewers "$B_viewers" --boards-prefix "match:B$run_id-" --board-count "$B_boards" --view top:10 \
    --writers 8 --rate "$B_rate" --duration "$B_dur" --settle 5
fi
if want C; then
  capture_evalsha
  # Rounds of (ceiling with the gateway stopped, then the gateway), back to
  # back, so both halves of a ratio see the same machine; the median counts.
  for r in $(seq 1 "$C_rounds"); do
    stop_gateway
    echo "load_C-ceiling$r=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
    echo "run.sh: ceiling $r: redis-benchmark -c $C_writers -n $C_n EVALSHA ..." >&2
    timeout 300 redis-benchmark -p "$redis_port" -c "$C_writers" -n "$C_n" -r 10000 --csv "${evalsha[@]}" \
      > "$work/C-ceiling$r.csv" 2>> "$work/C-ceiling.log" || die "redis-benchmark failed"
    if [ "$r" = 1 ]; then
      # For context: the gateway talks to Redis over one pipelined connection,
      # which Redis serves faster than many connections with one request each.
      echo "run.sh: ceiling, pipelined: redis-benchmark -c 1 -P $C_writers -n $C_n EVALSHA ..." >&2
      timeout 300 redis-benchmark -p "$redis_port" -c 1 -P "$C_writers" -n "$C_n" -r 10000 --csv "${evalsha[@]}" \
        > "$work/C-ceiling-pipelined.csv" 2>> "$work/C-ceiling.log" || die "redis-benchmark failed"
    fi
    start_gateway
    bench "C$r" --writers "$C_writers" --boards "match:C$run_id" --op incr --members 10000 --rate 0 --inflight 1 \
      --duration "$C_dur" --settle 5
  done
  # past the target: the same writers with 16 writes in flight each, to find the gateway's own limit
  bench C16 --writers "$C_writers" --boards "match:C$run_id" --op incr --members 10000 --rate 0 --inflight 16 \
    --duration "$C_dur" --settle 5
fi
if want E; then
  bench E --viewers "$E_viewers" --boards "match:E$run_id" --view top:10 --writers 8 --rate "$E_writes" \
    --writes "$E_writes" --duration 1 --settle 5 --verify --redis-port "$redis_port"
fi
if want K; then
  for n in $K_viewers; do
    bench "K$n" --viewers "$n" --boards "match:K$run_id-$n" --view top:10 --writers 4 \
      --rate "$A_rate" --duration "$K_dur" --settle 5
  done
fi
if want D; then
  # A fresh gateway, so its RSS before the connections is the baseline.
  stop_gateway
  start_gateway
  sleep 1
  echo "D_rss_before_kb=$(rss_kb "$gw_pid")" >> "$work/meta.env"
  echo "load_D=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
  echo "run.sh: case D: $D_procs x rankcast-bench --idle-only --viewers $D_per" >&2
  bench_pids=()
  for i in $(seq 0 $((D_procs - 1))); do
    timeout 300 "$bench_bin" --port "$gw_port" --gateway-pid "$gw_pid" --label "D$i" --idle-only \
      --viewers "$D_per" --boards "match:D$run_id" --view top:10 --hold "$D_hold" --connect-concurrency "$conc" \
      --src-offset $((i * 62)) --ready-file "$work/D$i.ready" > "$work/D$i.json" 2> "$work/D$i.log" &
    bench_pids+=($!)
  done
  ready=0
  for _ in $(seq 1200); do
    ready=0
    for i in $(seq 0 $((D_procs - 1))); do [ -f "$work/D$i.ready" ] && ready=$((ready + 1)); done
    [ "$ready" = "$D_procs" ] && break
    sleep 0.1
  done
  sleep 2
  echo "D_ready_procs=$ready" >> "$work/meta.env"
  echo "D_rss_held_kb=$(rss_kb "$gw_pid")" >> "$work/meta.env"
  echo "D_gateway_connections=$(curl -fs "http://127.0.0.1:$gw_port/metrics" | awk '/^rankcast_connections / { print $2 }')" \
    >> "$work/meta.env"
  failed=""
  for i in "${!bench_pids[@]}"; do wait "${bench_pids[$i]}" || failed="$failed D$i:$?"; done
  bench_pids=()
  [ -z "$failed" ] || die "idle rankcast-bench runs failed (case:exit):$failed"
  [ "$ready" = "$D_procs" ] || die "only $ready of $D_procs idle benches got ready"
  kill -0 "$gw_pid" 2> /dev/null || die "the gateway died during case D"
fi

# ---- the report ----------------------------------------------------------------------------
args=(report "$work" --cases "$only")
if [ "$smoke" = 1 ]; then args+=(--smoke); else args+=(--out "$out"); fi
node "$root/tests/bench/report.js" "${args[@]}"
