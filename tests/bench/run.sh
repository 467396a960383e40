#!/usr/bin/env bash
# The benchmark runner (issue 6): one command, its own Redis and gateway, a
# fixed matrix, one table.
#
#   bash tests/bench/run.sh            the full matrix (about 6 minutes); writes BENCHMARKS.md
#   bash tests/bench/run.sh --smoke    every case at toy size (about 25 s, CI); writes nothing
#                                      in the repo, fails only when the tool or the gateway is
#                                      broken (never on speed)
#   options: --out FILE       where the full run writes its report (default BENCHMARKS.md;
#                             the hand-written analysis at its end is kept)
#            --only A,B,...   run only these cases (A fan-out, B boards, C throughput,
#                             D idle connections, E burst, K the fan-out knee: case A's
#                             write rate with 250..5,000 viewers, L write throughput over
#                             48 boards on one Redis and on a 3-primary Redis Cluster, Z
#                             compression: 1,000 viewers of one top-100 without and with
#                             permessage-deflate, F first delivery: 1,000 viewers of one
#                             top-10 and 5 paced writes/s, each landing on a quiet board,
#                             Q acks under load: 5,000 viewers of one top-10 and 2,000
#                             writes/s, the writers' ack latency, U queued writes: a burst to
#                             the queued board `burst` against the same burst to `demo`,
#                             accepted vs applied rate and the lag, tests/bench/queued_burst.js, W workers: one gateway
#                             process, then --workers 2, under the same load, S sharded boards (issue 10):
#                             write throughput of `global` (8 shards) against `demo`, and the
#                             cost of REST reads of each, on one Redis and on case L's cluster,
#                             V distinct views (issue 23): subscribe time and gateway CPU for
#                             128..8,192 distinct views of one 10,000-member board, idle and at
#                             200 writes/s, tests/bench/distinct_views.js, M member lists
#                             (issue 26): 100 and 5,000 viewers with distinct 50-member lists
#                             at 2,000 writes/s, tests/bench/member_lists.js, H history
#                             (issue 27): one 100,000-member board built by 1,000,000 changes
#                             with history = full and the same writes to a capped board, then
#                             `get` of a top 10, a page at rank 50,000 and an around view at 10
#                             moments of the period, tests/bench/hist_depth.js; not in the
#                             default list (its build takes minutes): --only H);
#                             the report has only those (with --out:
#                             a report of only those cases, so point it away from
#                             BENCHMARKS.md unless every case runs)
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
#            run (D: several at once); after each K run, send_floor
#            (tests/bench/send_floor.c) sends the same frames with plain
#            send() to as many loopback sockets at the rate that K run
#            delivered, for the report's "gateway / floor" CPU per delta
#   L        case C's writers over 48 boards, once with the gateway on the
#            redis-server above and once on a private 3-primary Redis Cluster
#            (three more redis-servers on free loopback ports, formed with
#            redis-cli --cluster create, stopped with everything else); the
#            ceilings are the captured EVALSHA on one Redis, and on the
#            cluster one captured EVALSHA per primary (a board it owns) run on
#            all three primaries at once (see "L" below)
#   S        `global` (shards = 8) against `demo` (the same board, unsharded),
#            on the redis-server above, then on case L's cluster (formed once,
#            for L and S, whichever runs): case C's writers with S_inflight
#            writes in flight each (incr on 10,000 members) on global, then on
#            demo; then each board reset and filled with S_members members
#            (rankcast-bench, set) and tests/bench/read_cost.js: sequential REST
#            reads of top 10, page 100 (offset 990) and 100 rows of each board,
#            latency and Redis CPU per 1,000 reads (see "S" below)
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
only="A,B,C,D,E,F,K,L,Q,U,Z,W,S,V,M"
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
cmake --build "$build" -j "$(nproc)" --target rankcast rankcast-bench send_floor > /dev/null
gw_bin="$root/$build/gateway/rankcast"
bench_bin="$root/$build/tests/bench/rankcast-bench"
floor_bin="$root/$build/tests/bench/send_floor"
[[ "$build" = /* ]] && gw_bin="$build/gateway/rankcast" && bench_bin="$build/tests/bench/rankcast-bench" &&
  floor_bin="$build/tests/bench/send_floor"

work="$(mktemp -d /tmp/rankcast-bench.XXXXXX)"
redis_pid=""
gw_pid=""
bench_pids=()
cluster_pids=()  # case L: the cluster's redis-servers
cluster_ports=()
create_pid=""    # case L: redis-cli --cluster create, while it runs
cleanup() {
  local p
  for p in "${bench_pids[@]}"; do kill "$p" 2> /dev/null || true; done
  [ -n "$gw_pid" ] && { kill "$gw_pid" 2> /dev/null; wait "$gw_pid" 2> /dev/null; } || true
  [ -n "$redis_pid" ] && { kill "$redis_pid" 2> /dev/null; wait "$redis_pid" 2> /dev/null; } || true
  [ -n "$create_pid" ] && kill "$create_pid" 2> /dev/null || true
  for p in "${cluster_pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${cluster_pids[@]}"; do wait "$p" 2> /dev/null || true; done
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
# case H (issue 27) writes the same changes to histfull (history = full) and
# histcap (the default capped log), both otherwise demo
printf '%s\n' '' '[board histfull]' 'order = desc' 'ops = incr, set, best' 'tiebreak = earliest' \
  'tiebreak_resolution = 1s' 'tiebreak_horizon = 3650d' 'tiebreak_base = 2026-01-01T00:00:00Z' 'history = full' \
  '' '[board histcap]' 'order = desc' 'ops = incr, set, best' 'tiebreak = earliest' \
  'tiebreak_resolution = 1s' 'tiebreak_horizon = 3650d' 'tiebreak_base = 2026-01-01T00:00:00Z' >> "$conf"
# case S needs the sharded board `global` (issue 10): add it as docs/sharded.md
# describes it when the shipped config does not declare it (yet)
if ! grep -q '^\[board global\]' "$conf"; then
  printf '%s\n' '' '[board global]' 'order = desc' 'ops = incr, set, best' 'tiebreak = earliest' \
    'tiebreak_resolution = 1s' 'tiebreak_horizon = 3650d' 'tiebreak_base = 2026-01-01T00:00:00Z' 'shards = 8' >> "$conf"
fi
# case H's history limits (docs/history.md): RC_BENCH_H_UNDO_MAX and
# RC_BENCH_H_CKPT_EVERY (auto, off or N) replace history_undo_max and
# history_checkpoint_every when set
if [ -n "${RC_BENCH_H_UNDO_MAX:-}" ]; then
  sed -i -E "s/^history_undo_max[[:space:]]*=.*/history_undo_max = ${RC_BENCH_H_UNDO_MAX}/" "$conf"
fi
if [ -n "${RC_BENCH_H_CKPT_EVERY:-}" ]; then
  sed -i -E "s/^history_checkpoint_every[[:space:]]*=.*/history_checkpoint_every = ${RC_BENCH_H_CKPT_EVERY}/" "$conf"
fi
tick_ms="$(sed -nE 's/^tick[[:space:]]*=[[:space:]]*([0-9]+)ms.*/\1/p' "$conf")"
[ -n "$tick_ms" ] || die "cannot read the tick (in ms) from the config"
"$gw_bin" --check-config "$conf" > /dev/null || die "generated config refused"
gw_port="$(free_port)" || die "no free port"
# What the gateway runs on: the redis-server above; case L points these at
# its cluster for a while.
gw_redis="127.0.0.1:$redis_port"
gw_state="$work/state"

start_gateway() {
  "$gw_bin" --config "$conf" --listen "127.0.0.1:$gw_port" --redis "$gw_redis" \
    --state "$gw_state" >> "$work/gateway.log" 2>&1 &
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
  K_viewers=50;   K_dur=1;      K_floor_dur=1
  L_dur=0.5;      L_n=3000;     L_rounds=1
  Z_viewers=50;   Z_rate=200;   Z_dur=0.5
  F_viewers=50;   F_rate=5;     F_dur=2
  Q_viewers=100;  Q_rate=500;   Q_dur=1
  U_writes=2000
  W_viewers=100;  W_dur=1
  S_writers=8;    S_inflight=2;  S_dur=0.5;  S_rounds=1;  S_members=2000; S_reads=20
  V_views="64,256"; V_members=2000; V_rounds=1; V_phase=1
  M_viewers="20,100"; M_members=1000; M_rate=200; M_phase=0.5; M_procs=2; M_quiet=200; M_settle=200; M_floor_dur=0.3
  H_members=2000; H_changes=10000; H_reps=2
  conc=100
else
  A_viewers=10000; A_rate=2000;  A_dur=20
  B_viewers=1000;  B_boards=100; B_rate=10000; B_dur=20
  C_writers=64;    C_dur=8;      C_n=150000; C_rounds=3
  D_procs=4;       D_per=4750;   D_hold=25
  E_viewers=5000;  E_writes=20000
  K_viewers="250 500 1000 2000 5000"; K_dur=10; K_floor_dur=3
  L_dur=6;         L_n=99999;    L_rounds=3
  Z_viewers=1000;  Z_rate=500;   Z_dur=10
  F_viewers=1000;  F_rate=5;     F_dur=20
  Q_viewers=5000;  Q_rate=2000;  Q_dur=10
  U_writes=20000
  W_viewers=2000;  W_dur=10
  S_writers=64;    S_inflight=4;  S_dur=6;    S_rounds=2;  S_members=10000; S_reads=1000
  V_views="128,512,2048,8192"; V_members=10000; V_rounds=3; V_phase=3
  M_viewers="${RC_BENCH_M_VIEWERS:-100,5000}"; M_members=10000; M_rate="${RC_BENCH_M_RATE:-2000}"; M_phase=5; M_procs=4
  M_quiet=2500; M_settle=2000; M_floor_dur=3
  H_members="${RC_BENCH_H_MEMBERS:-100000}"; H_changes="${RC_BENCH_H_CHANGES:-1000000}"; H_reps=5
  conc=200
fi

echo "A_rate=$A_rate" >> "$work/meta.env"
echo "K_floor_dur=$K_floor_dur" >> "$work/meta.env"

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

# floor NAME KCASE: send_floor with K case KCASE's connections, deltas per
# viewer per second and average delta size (report.js floor-args), JSON into
# $work/NAME.json; a failed or empty run stops everything, like bench's.
# ARGS (optional) is report.js's command for the parameters (default
# floor-args KCASE.json TICK_MS); FLOOR_DUR (default K_floor_dur) its seconds.
floor() {
  local name="$1" kcase="$2" conns rate payload dur="${FLOOR_DUR:-$K_floor_dur}"
  local -a args=(floor-args "$work/$kcase.json" "$tick_ms")
  [ $# -gt 2 ] && args=("${@:3}")
  read -r conns rate payload <<< "$(node "$root/tests/bench/report.js" "${args[@]}")" ||
    die "cannot read case $kcase's result for the floor"
  [[ "$conns" =~ ^[0-9]+$ && "$payload" =~ ^[0-9]+$ && "$rate" =~ ^[0-9.]+$ ]] ||
    die "no floor parameters from case $kcase ($conns $rate $payload)"
  echo "run.sh: floor $name: send_floor --conns $conns --tick-rate $rate --payload $payload --duration $dur" >&2
  echo "load_$name=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
  timeout 60 "$floor_bin" --label "$name" --conns "$conns" --tick-rate "$rate" --payload "$payload" \
    --duration "$dur" > "$work/$name.json" 2> "$work/$name.log" || {
    local rc=$?
    tail -n 5 "$work/$name.log" >&2
    die "send_floor $name exited $rc"
  }
  [ -s "$work/$name.json" ] || die "send_floor $name wrote no result"
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
  # the write's EVALSHA (other scripts, such as the history checkpoints' job
  # or the viewer counts, never name the member)
  local pat="^[0-9.]+ \\[[^]]*\\] \"EVALSHA\" .*\"incr\" \"$member\""
  for _ in $(seq 50); do grep -q -E "$pat" "$work/monitor.txt" && break; sleep 0.05; done
  kill "$mon_pid" 2> /dev/null || true
  wait "$mon_pid" 2> /dev/null || true
  grep -m1 -E "$pat" "$work/monitor.txt" > "$work/evalsha.txt" || die "no write's EVALSHA seen by MONITOR"
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

# ---- case L's helpers, and its cluster (formed while the other cases run) ------------------
L_boards=48 # boards match:L<run>-b0 .. b47, written round robin

# A loopback port for a cluster node: it and its bus port (+10000) free, the
# bus port below the ephemeral range.
free_cluster_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 2700))
    [[ " ${cluster_ports[*]} $gw_port $redis_port " == *" $p "* || " $gw_port $redis_port " == *" $((p + 10000)) "* ]] && continue
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null && ! (exec 3<> "/dev/tcp/127.0.0.1/$((p + 10000))") 2> /dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# Three cluster-enabled redis-servers (sets cluster_pids, cluster_ports),
# then redis-cli --cluster create (three primaries, no replicas) in the
# background: most of its second or two is waiting for the nodes to meet.
# cluster_ready waits for it.
start_cluster() {
  local i p seeds=()
  mkdir -p "$work/cluster"
  for i in 0 1 2; do
    p="$(free_cluster_port)" || die "no free port for a cluster node"
    mkdir -p "$work/cluster/$p"
    redis-server --cluster-enabled yes --cluster-config-file nodes.conf --port "$p" --bind 127.0.0.1 \
      --dir "$work/cluster/$p" --save '' --appendonly no --logfile "$work/cluster/$p/redis.log" &
    cluster_pids+=($!)
    cluster_ports+=("$p")
    seeds+=("127.0.0.1:$p")
  done
  for i in 0 1 2; do
    p="${cluster_ports[$i]}"
    # that very process (not another server that took the port first)
    for _ in $(seq 100); do
      redis-cli -p "$p" info server 2> /dev/null | grep -q "^process_id:${cluster_pids[$i]}" && break
      sleep 0.05
    done
    redis-cli -p "$p" info server 2> /dev/null | grep -q "^process_id:${cluster_pids[$i]}" ||
      die "cluster node did not start on $p (see $work/cluster/$p/redis.log)"
  done
  timeout 60 redis-cli --cluster create "${seeds[@]}" --cluster-replicas 0 --cluster-yes \
    > "$work/cluster/create.log" 2>&1 &
  create_pid=$!
}
# cluster_up: cluster_ready the first time (L and S share the cluster), and
# sets cluster_seeds, the gateway's --redis for it.
cluster_formed=0
cluster_up() {
  if [ "$cluster_formed" = 0 ]; then
    cluster_ready
    cluster_formed=1
  fi
  cluster_seeds="$(printf '127.0.0.1:%s,' "${cluster_ports[@]}")"
  cluster_seeds="${cluster_seeds%,}"
}
# True once the cluster is formed and every node says cluster_state:ok.
cluster_ready() {
  local p ok=0 rc=0
  wait "$create_pid" || rc=$?
  create_pid=""
  [ "$rc" = 0 ] || { tail -n 20 "$work/cluster/create.log" >&2; die "redis-cli --cluster create exited $rc"; }
  for _ in $(seq 300); do
    ok=1
    for p in "${cluster_ports[@]}"; do
      redis-cli -p "$p" cluster info 2> /dev/null | grep -q '^cluster_state:ok' || { ok=0; break; }
    done
    [ "$ok" = 1 ] && return 0
    sleep 0.1
  done
  die "the cluster did not reach cluster_state:ok in 30 s"
}
stop_cluster() {
  local p
  for p in "${cluster_pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${cluster_pids[@]}"; do wait "$p" 2> /dev/null || true; done
  cluster_pids=()
}

# capture_writes PREFIX PORT...: one write through the gateway to PREFIX0,
# PREFIX1, ... until MONITOR on every PORT has seen the gateway's EVALSHA for
# it (on a cluster: for a board that node owns). Each port's first one, with
# the member turned into __rand_int__, goes to $work/L-evalsha-PORT.args
# (NUL-separated), checked like case C's capture; sha_ok becomes "no (...)"
# when its SHA is not lua/write.lua's.
capture_writes() {
  local prefix="$1" p i left mons=() member="u:ceiling0" file_sha
  local -a ev
  # the write's EVALSHA (other scripts, such as the jobs' lock, never name the member)
  local pat="^[0-9.]+ \\[[^]]*\\] \"EVALSHA\" .*\"incr\" \"$member\""
  shift
  for p in "$@"; do
    timeout 30 redis-cli -p "$p" monitor > "$work/L-monitor-$p.txt" 2>&1 &
    mons+=($!)
  done
  bench_pids=("${mons[@]}")
  for p in "$@"; do # MONITOR answers OK once it is on
    for _ in $(seq 100); do grep -q '^OK' "$work/L-monitor-$p.txt" && break; sleep 0.01; done
  done
  for i in $(seq 0 $((L_boards - 1))) wait; do
    if [ "$i" = wait ]; then sleep 1; else
      curl -fs -H "Authorization: Bearer $key" -X POST "http://127.0.0.1:$gw_port/api/v1/boards/$prefix$i/scores" \
        -d "{\"member\":\"$member\",\"op\":\"incr\",\"delta\":1}" > /dev/null || die "the capture write to $prefix$i failed"
      sleep 0.02
    fi
    left=0
    for p in "$@"; do grep -qE "$pat" "$work/L-monitor-$p.txt" || left=$((left + 1)); done
    [ "$left" = 0 ] && break
  done
  for i in "${mons[@]}"; do kill "$i" 2> /dev/null || true; wait "$i" 2> /dev/null || true; done
  bench_pids=()
  mons=()
  file_sha="$(rcli -x script load < lua/write.lua)" || die "SCRIPT LOAD of lua/write.lua failed"
  [[ "$file_sha" =~ ^[0-9a-f]{40}$ ]] || die "SCRIPT LOAD of lua/write.lua answered '$file_sha'"
  for p in "$@"; do
    grep -m1 -E "$pat" "$work/L-monitor-$p.txt" > "$work/L-evalsha-$p.txt" || die "no write's EVALSHA seen by MONITOR on $p"
  done
  for p in "$@"; do # one node each, at once (each takes a moment to start)
    node "$root/tests/bench/report.js" monitor-args "$work/L-evalsha-$p.txt" "$member" "u:__rand_int__" \
      > "$work/L-evalsha-$p.args" &
    mons+=($!)
  done
  for i in "${mons[@]}"; do wait "$i" || die "cannot split a captured EVALSHA ($*)"; done
  for p in "$@"; do
    mapfile -d '' ev < "$work/L-evalsha-$p.args"
    [ "${#ev[@]}" -ge 4 ] && [ "${ev[0]^^}" = EVALSHA ] && [[ "${ev[1]}" =~ ^[0-9a-f]{40}$ ]] ||
      die "the EVALSHA captured on $p is not one"
    [[ "${ev[*]}" == *"u:__rand_int__"* ]] || die "the EVALSHA captured on $p does not name the member $member"
    [ "${ev[1]}" = "$file_sha" ] || sha_ok="no (${ev[1]} on $p, lua/write.lua $file_sha)"
    echo "L_ceiling_key_$p=${ev[3]}" >> "$work/meta.env"
  done
}

# node_writes PORT [PATTERN]: "boards writes" for the case's boards on that
# server (writes: the sum of their seq, which every acked incr bumps once);
# the boards are those whose seq key matches PATTERN (default: case L's).
# One SCAN, then every GET in one redis-cli (keys of many slots: no MGET on a
# cluster node).
node_writes() {
  local keys pat="${2:-}"
  [ -n "$pat" ] || pat="rc:{$L_prefix*|}:seq"
  keys="$(redis-cli -p "$1" --scan --pattern "$pat")" || die "SCAN on $1 failed"
  [ -n "$keys" ] || { echo "0 0"; return; }
  sed 's/^/GET /' <<< "$keys" | redis-cli -p "$1" | awk '{ n++; s += $1 } END { printf "%d %d\n", n, s }'
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

if want L || want S; then
  start_cluster
fi

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
    floor "K$n-floor" "K$n"
  done
fi
# F: first delivery. Writes far apart (5/s against a 50 ms tick), so each
# one finds its view quiet: what a viewer waits for is the round trip, not
# the tick (issue 13's leading edge). One writer, paced with --jitter: each
# write at a random moment of its period, so the writes meet the tick at
# every phase (evenly paced writes would meet it at one fixed phase).
if want F; then
  bench F --viewers "$F_viewers" --boards "match:F$run_id" --view top:10 --writers 1 \
    --rate "$F_rate" --jitter --duration "$F_dur" --settle 5
fi
# Q: acks under load. Case K's largest load (one top-10, 2,000 writes/s from 4
# writers) at Q_viewers viewers; what counts is the writers' send-to-ack time
# while the fan-out keeps the loop busy.
if want Q; then
  bench Q --viewers "$Q_viewers" --boards "match:Q$run_id" --view top:10 --writers 4 \
    --rate "$Q_rate" --duration "$Q_dur" --settle 5
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
  echo "D_gateway_connections=$(curl -fs -H "Authorization: Bearer $key" "http://127.0.0.1:$gw_port/metrics" | awk '/^rankcast_connections / { print $2 }')" \
    >> "$work/meta.env"
  failed=""
  for i in "${!bench_pids[@]}"; do wait "${bench_pids[$i]}" || failed="$failed D$i:$?"; done
  bench_pids=()
  [ -z "$failed" ] || die "idle rankcast-bench runs failed (case:exit):$failed"
  [ "$ready" = "$D_procs" ] || die "only $ready of $D_procs idle benches got ready"
  kill -0 "$gw_pid" 2> /dev/null || die "the gateway died during case D"
fi

# ---- Z: compression -------------------------------------------------------------------------
# The same load twice on one gateway ([server] compression = on, as shipped):
# Z_viewers viewers of one top-100, Z_rate writes/s paced (set: every write
# moves a member to the top), first with viewers that do not offer
# permessage-deflate (Z-plain), then with viewers that do (Z-deflate), each on
# a board of its own. rankcast-bench reads the gateway's byte and compression
# counters (/metrics) at the start and the end of each measurement.
if want Z; then
  echo "Z_viewers=$Z_viewers" >> "$work/meta.env"
  bench Z-plain --viewers "$Z_viewers" --boards "match:Z$run_id-plain" --view top:100 --writers 4 \
    --rate "$Z_rate" --duration "$Z_dur" --settle 5
  bench Z-deflate --deflate --viewers "$Z_viewers" --boards "match:Z$run_id-deflate" --view top:100 --writers 4 \
    --rate "$Z_rate" --duration "$Z_dur" --settle 5
fi

# ---- W: workers ----------------------------------------------------------------------------
# The same load on one gateway process (W1, as shipped) and on a group of two
# workers (W2: RANKCAST_WORKERS=2, so the command line is the same):
# W_viewers viewers of one top-10, case A's write rate, 4 writers.
# rankcast-bench's gateway CPU is the supervisor's pid plus its live
# children (tests/bench/bench_proc.c), so W2's is summed over the workers;
# the connections each worker accepted during W2 come from /metrics
# (rankcast_worker_connections_total) before and after it.
worker_accepts() { # "N0 N1 ...": WebSocket connections each worker accepted so far
  curl -fs -H "Authorization: Bearer $key" "http://127.0.0.1:$gw_port/metrics" | awk '/^rankcast_worker_connections_total\{/ { printf "%s%s", n++ ? " " : "", $NF }'
}
workers_up() { # how many workers /metrics shows running
  curl -fs -H "Authorization: Bearer $key" "http://127.0.0.1:$gw_port/metrics" | awk '/^rankcast_worker_up\{/ && $NF == 1 { n++ } END { print n + 0 }'
}
if want W; then
  echo "W_viewers=$W_viewers" >> "$work/meta.env"
  bench W1 --viewers "$W_viewers" --boards "match:W$run_id-1" --view top:10 --writers 4 \
    --rate "$A_rate" --duration "$W_dur" --settle 5
  stop_gateway
  RANKCAST_WORKERS=2 start_gateway
  for _ in $(seq 100); do [ "$(workers_up)" = 2 ] && break; sleep 0.1; done
  [ "$(workers_up)" = 2 ] || die "the gateway with --workers 2 did not show two running workers"
  read -r -a w_before <<< "$(worker_accepts)"
  echo "W2_processes=1 supervisor + $(pgrep -c -P "$gw_pid") workers" >> "$work/meta.env"
  bench W2 --viewers "$W_viewers" --boards "match:W$run_id-2" --view top:10 --writers 4 \
    --rate "$A_rate" --duration "$W_dur" --settle 5
  read -r -a w_after <<< "$(worker_accepts)"
  echo "W2_accepts=$((w_after[0] - w_before[0])) $((w_after[1] - w_before[1]))" >> "$work/meta.env"
  stop_gateway
  start_gateway
fi

# ---- L: write throughput over many boards, one Redis and a 3-primary cluster ---------------
# Case C's writers (same count, one write in flight each, incr on 10,000
# members) spread round robin over L_boards boards of the match:* template,
# in the same run: (1) the gateway on the redis-server above, (2) on a private
# 3-primary Redis Cluster. Rounds of (ceiling, gateway) per set-up, the
# gateway stopped while redis-benchmark runs, as in C. Every write must be
# acked: anything else fails the case (report.js).
if want L; then
  L_prefix="match:L$run_id-b"
  hz="$(getconf CLK_TCK)"
  {
    echo "L_boards=$L_boards"
    echo "L_writers=$C_writers"
    echo "L_n=$L_n"
  } >> "$work/meta.env"
  # the gateway runs on one Redis here: its EVALSHA there
  sha_ok=yes
  echo "run.sh: case L: capturing the gateway's EVALSHA on one Redis" >&2
  capture_writes "match:Lceil$run_id-b" "$redis_port"
  cluster_up
  echo "L_cluster_ports=${cluster_ports[*]}" >> "$work/meta.env"

  for r in $(seq 1 "$L_rounds"); do
    # (1) one Redis
    stop_gateway
    mapfile -d '' ev < "$work/L-evalsha-$redis_port.args"
    echo "load_L-one-ceiling$r=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
    echo "run.sh: ceiling L one Redis $r: redis-benchmark -c $C_writers -n $L_n EVALSHA ..." >&2
    timeout 300 redis-benchmark -p "$redis_port" -c "$C_writers" -n "$L_n" -r 10000 --csv "${ev[@]}" \
      > "$work/L-one-ceiling$r.csv" 2>> "$work/L-ceiling.log" || die "redis-benchmark failed"
    gw_redis="127.0.0.1:$redis_port"; gw_state="$work/state"
    start_gateway
    read -r _ w0 <<< "$(node_writes "$redis_port")"
    c0="$(cpu_ticks "$redis_pid")"
    bench "L-one$r" --writers "$C_writers" --boards-prefix "$L_prefix" --board-count "$L_boards" --op incr \
      --members 10000 --rate 0 --inflight 1 --duration "$L_dur" --settle 5
    read -r nb w1 <<< "$(node_writes "$redis_port")"
    echo "L-one${r}_node0=127.0.0.1:$redis_port $nb $((w1 - w0)) $(echo "$(cpu_ticks "$redis_pid") $c0 $hz" | awk '{ printf "%.3f", ($1 - $2) / $3 }')" \
      >> "$work/meta.env"

    # (2) the cluster: every primary's ceiling at the same time, split -c and -n
    stop_gateway
    if [ "$r" = 1 ]; then
      # the gateway on the cluster, then its EVALSHA on each primary
      gw_redis="$cluster_seeds"; gw_state="$work/state-cluster"
      start_gateway
      health="$(curl -fs -H "Authorization: Bearer $key" "http://127.0.0.1:$gw_port/healthz")" || die "no /healthz from the gateway on the cluster"
      [[ "$health" == *'"mode":"cluster"'* ]] || die "the gateway did not see a cluster: $health"
      echo "L_cluster_mode=cluster" >> "$work/meta.env"
      echo "run.sh: case L: capturing the gateway's EVALSHA on each primary (127.0.0.1:${cluster_ports[*]})" >&2
      capture_writes "match:Lceil$run_id-b" "${cluster_ports[@]}"
      echo "L_script_sha_matches=$sha_ok" >> "$work/meta.env"
      stop_gateway
      # Does redis-benchmark --cluster route the EVALSHA by its keys? (Its
      # clients are spread over the primaries whatever the keys: those on a
      # primary that does not own the slot get MOVED.) Recorded, not used.
      mapfile -d '' ev < "$work/L-evalsha-${cluster_ports[0]}.args"
      rc=0
      timeout 20 redis-benchmark --cluster -h 127.0.0.1 -p "${cluster_ports[0]}" -c 3 -n 300 -r 10000 --csv "${ev[@]}" \
        > "$work/L-rb-cluster.out" 2>&1 || rc=$?
      echo "L_rb_cluster_probe=exit $rc, EVALSHA result lines: $(grep -c '^"EVALSHA' "$work/L-rb-cluster.out" || true), first error: $(grep -m1 -o 'MOVED [0-9]* [0-9.:]*' "$work/L-rb-cluster.out" || echo none)" \
        >> "$work/meta.env"
    fi
    echo "load_L-cluster-ceiling$r=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
    echo "run.sh: ceiling L cluster $r: redis-benchmark on each primary at once, -c $C_writers and -n $L_n split 3 ways, EVALSHA ..." >&2
    t0="$(date +%s%N)"
    bench_pids=()
    for i in 0 1 2; do
      p="${cluster_ports[$i]}"
      mapfile -d '' ev < "$work/L-evalsha-$p.args"
      nc=$((C_writers / 3 + (i < C_writers % 3 ? 1 : 0)))
      echo "L-cluster-ceiling${r}_$i=127.0.0.1:$p $nc $((L_n / 3))" >> "$work/meta.env"
      timeout 300 redis-benchmark -p "$p" -c "$nc" -n $((L_n / 3)) -r 10000 --csv "${ev[@]}" \
        > "$work/L-cluster-ceiling$r-$i.csv" 2>> "$work/L-ceiling.log" &
      bench_pids+=($!)
    done
    failed=""
    for i in "${!bench_pids[@]}"; do wait "${bench_pids[$i]}" || failed="$failed $i:$?"; done
    bench_pids=()
    [ -z "$failed" ] || die "redis-benchmark on the cluster failed (node:exit):$failed"
    echo "L-cluster-ceiling${r}_wall_ms=$((($(date +%s%N) - t0) / 1000000))" >> "$work/meta.env"
    gw_redis="$cluster_seeds"; gw_state="$work/state-cluster"
    start_gateway
    w0s=(); c0s=()
    for i in 0 1 2; do
      read -r _ w <<< "$(node_writes "${cluster_ports[$i]}")"
      w0s+=("$w"); c0s+=("$(cpu_ticks "${cluster_pids[$i]}")")
    done
    bench "L-cluster$r" --writers "$C_writers" --boards-prefix "$L_prefix" --board-count "$L_boards" --op incr \
      --members 10000 --rate 0 --inflight 1 --duration "$L_dur" --settle 5
    for i in 0 1 2; do
      read -r nb w1 <<< "$(node_writes "${cluster_ports[$i]}")"
      echo "L-cluster${r}_node$i=127.0.0.1:${cluster_ports[$i]} $nb $((w1 - ${w0s[$i]})) $(echo "$(cpu_ticks "${cluster_pids[$i]}") ${c0s[$i]} $hz" | awk '{ printf "%.3f", ($1 - $2) / $3 }')" \
        >> "$work/meta.env"
    done
    # what the gateway's cluster client saw: redirects, retries, CLUSTERDOWN, failed nodes
    echo "L-cluster${r}_metrics=$(curl -fs -H "Authorization: Bearer $key" "http://127.0.0.1:$gw_port/metrics" |
      awk '/^rankcast_redis_(moved|ask|tryagain|clusterdown|failures)_total / { sub(/^rankcast_redis_/, ""); sub(/_total/, ""); printf "%s%s %s", n++ ? ", " : "", $1, $2 }')" \
      >> "$work/meta.env"
  done
  # back to one Redis (the cluster stays up for case S, stopped after it)
  stop_gateway
  gw_redis="127.0.0.1:$redis_port"; gw_state="$work/state"
  start_gateway
fi

# ---- S: sharded boards (issue 10) -----------------------------------------------------------
# `global` (shards = 8, docs/sharded.md) against `demo` (the same board
# unsharded), first with the gateway on the redis-server above, then on case
# L's cluster. Writes: S_writers writer connections with S_inflight writes in
# flight each, incr on 10,000 members, as fast as acks come back; S_rounds
# rounds of global then demo (demo first in even rounds), each server's CPU
# and the writes it holds for the board (the sum of the board's seq keys: one
# per shard on global) before and after each run. Reads: each board reset
# and filled with S_members members (set, values 1..S_members, through the
# gateway), then tests/bench/read_cost.js: S_reads sequential REST reads per
# board of top 10, page 100 (offset 990, 10 rows) and 100 rows. Any write not
# acked, any wrong read, or writes Redis does not hold fail the case
# (report.js).
s_seq_pattern() { # s_seq_pattern BOARD: the board's seq keys (one per shard on a sharded board)
  if [ "$1" = global ]; then echo "rc:{$1#*|}:seq"; else echo "rc:{$1|}:seq"; fi
}
# s_writes SETUP ROUND BOARD: one write run, per server of s_ports/s_pids
# "HOST:PORT seq-keys writes cpu_s" into meta.env.
s_writes() {
  local name="S-$1-$3$2" b="$3" pat i nb w
  local -a w0=() c0=()
  pat="$(s_seq_pattern "$b")"
  for i in "${!s_ports[@]}"; do
    read -r _ w <<< "$(node_writes "${s_ports[$i]}" "$pat")"
    w0+=("$w"); c0+=("$(cpu_ticks "${s_pids[$i]}")")
  done
  bench "$name" --writers "$S_writers" --boards "$b" --op incr --members 10000 --rate 0 --inflight "$S_inflight" \
    --duration "$S_dur" --settle 5
  for i in "${!s_ports[@]}"; do
    read -r nb w <<< "$(node_writes "${s_ports[$i]}" "$pat")"
    echo "${name}_node$i=127.0.0.1:${s_ports[$i]} $nb $((w - w0[i])) $(echo "$(cpu_ticks "${s_pids[$i]}") ${c0[$i]} $hz" | awk '{ printf "%.3f", ($1 - $2) / $3 }')" \
      >> "$work/meta.env"
  done
}
# s_setup SETUP: the writes, the fill and the reads on what the gateway runs on now.
s_setup() {
  local setup="$1" r b
  for r in $(seq 1 "$S_rounds"); do
    if [ $((r % 2)) = 1 ]; then
      s_writes "$setup" "$r" global; s_writes "$setup" "$r" demo
    else
      s_writes "$setup" "$r" demo; s_writes "$setup" "$r" global
    fi
  done
  for b in global demo; do
    curl -fs -H "Authorization: Bearer $key" -X POST "http://127.0.0.1:$gw_port/api/v1/boards/$b/reset" -d '{}' \
      > /dev/null || die "the reset of $b before the fill failed"
    bench "S-$setup-fill-$b" --writers 4 --boards "$b" --op set --members "$S_members" --writes "$S_members" \
      --rate 0 --inflight 16 --duration 300 --settle 5
  done
  echo "run.sh: case S: read_cost.js --boards global,demo --reads $S_reads ($setup)" >&2
  echo "load_S-$setup-read=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
  timeout 600 node "$root/tests/bench/read_cost.js" --port "$gw_port" --boards global,demo --reads "$S_reads" \
    --members "$S_members" --redis-pids "$(IFS=,; echo "${s_pids[*]}")" --gateway-pid "$gw_pid" --hz "$hz" \
    --label "S-$setup-read" > "$work/S-$setup-read.json" 2> "$work/S-$setup-read.log" ||
    { tail -n 5 "$work/S-$setup-read.log" >&2; die "read_cost.js ($setup) failed"; }
  kill -0 "$gw_pid" 2> /dev/null || die "the gateway died during case S ($setup)"
}
if want S; then
  hz="$(getconf CLK_TCK)"
  {
    echo "S_writers=$S_writers"
    echo "S_inflight=$S_inflight"
    echo "S_members=$S_members"
    echo "S_reads=$S_reads"
    echo "S_rounds=$S_rounds"
    echo "S_hz=$hz"
    echo "S_global_shards=$(awk '/^\[board global\]/ { in_g = 1; next } /^\[/ { in_g = 0 } in_g && /^shards[[:space:]]*=/ { sub(/.*=[[:space:]]*/, ""); print }' "$conf")"
  } >> "$work/meta.env"
  # (1) one Redis
  s_ports=("$redis_port"); s_pids=("$redis_pid")
  s_setup one
  # (2) the cluster
  cluster_up
  echo "S_cluster_ports=${cluster_ports[*]}" >> "$work/meta.env"
  stop_gateway
  gw_redis="$cluster_seeds"; gw_state="$work/state-cluster"
  start_gateway
  health="$(curl -fs -H "Authorization: Bearer $key" "http://127.0.0.1:$gw_port/healthz")" || die "no /healthz from the gateway on the cluster"
  [[ "$health" == *'"mode":"cluster"'* ]] || die "the gateway did not see a cluster: $health"
  echo "S_cluster_mode=cluster" >> "$work/meta.env"
  s_ports=("${cluster_ports[@]}"); s_pids=("${cluster_pids[@]}")
  s_setup cluster
  echo "S-cluster_metrics=$(curl -fs -H "Authorization: Bearer $key" "http://127.0.0.1:$gw_port/metrics" |
    awk '/^rankcast_redis_(moved|ask|tryagain|clusterdown|failures)_total / { sub(/^rankcast_redis_/, ""); sub(/_total/, ""); printf "%s%s %s", n++ ? ", " : "", $1, $2 }')" \
    >> "$work/meta.env"
  # back to one Redis
  stop_gateway
  gw_redis="127.0.0.1:$redis_port"; gw_state="$work/state"
  start_gateway
fi
# the cluster's work (L, S) is done
if [ "${#cluster_pids[@]}" -gt 0 ]; then
  stop_cluster
fi

# ---- U: queued writes ------------------------------------------------------------------------
# A burst of U_writes incr writes (4 writer connections, up to 256 in flight
# each, a req per write) to the shipped queued board `burst`, after the same
# burst to `demo` (direct), through tests/bench/queued_burst.js: accepted
# writes/s, applied writes/s and the queue's lag from /metrics.
if want U; then
  echo "run.sh: case U: queued_burst.js --writes $U_writes --conns 4" >&2
  echo "load_U=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
  timeout 300 node "$root/tests/bench/queued_burst.js" --port "$gw_port" --key "$key" --writes "$U_writes" \
    --conns 4 --inflight 256 > "$work/U.json" 2> "$work/U.log" || { tail -n 5 "$work/U.log" >&2; die "queued_burst.js failed"; }
  kill -0 "$gw_pid" 2> /dev/null || die "the gateway died during case U"
fi

# ---- V: distinct views (issue 23) -----------------------------------------------------------
# V_views distinct views of one V_members-member board (top N, pages, around
# views; from addresses spread over 127.0.0.0/8), V_rounds rounds each,
# through tests/bench/distinct_views.js: subscribe time, gateway CPU, views
# looked at, a reference client's ping, CPU idle and at 200 writes/s.
if want V; then
  echo "run.sh: case V: distinct_views.js --views $V_views --members $V_members --rounds $V_rounds" >&2
  echo "load_V=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
  timeout 1800 node "$root/tests/bench/distinct_views.js" --port "$gw_port" --key "$key" --gateway-pid "$gw_pid" \
    --hz "$(getconf CLK_TCK)" --views "$V_views" --members "$V_members" --rounds "$V_rounds" --phase-s "$V_phase" \
    --redis-pid "$redis_pid" \
    > "$work/V.json" 2> "$work/V.log" || { tail -n 5 "$work/V.log" >&2; die "distinct_views.js failed"; }
  kill -0 "$gw_pid" 2> /dev/null || die "the gateway died during case V"
fi

# ---- M: member lists (issue 26) ------------------------------------------------------------
# M_viewers viewers, each on its own connection with its own 50-member list
# of one M_members-member board (from addresses spread over 127.0.0.0/8,
# held by M_procs child processes), then M_rate writes/s for M_phase s;
# then the same connections on the board's top 10 and the same writes,
# through tests/bench/member_lists.js: Redis calls/s for list views (the
# gateway's counter; Redis's commandstats for a check), list and top-10
# deltas, gateway CPU per delta of each, write-to-screen p50/p99. The full
# size is set by RC_BENCH_M_VIEWERS / RC_BENCH_M_RATE (default 100,5000 /
# 2000).
if want M; then
  echo "run.sh: case M: member_lists.js --viewers $M_viewers --members $M_members --write-rate $M_rate --procs $M_procs" >&2
  echo "load_M=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
  echo "M_uptime=$(uptime)" >> "$work/meta.env"
  timeout 1800 node "$root/tests/bench/member_lists.js" --port "$gw_port" --key "$key" --gateway-pid "$gw_pid" \
    --hz "$(getconf CLK_TCK)" --redis-port "$redis_port" --viewers "$M_viewers" --members "$M_members" \
    --write-rate "$M_rate" --phase-s "$M_phase" --procs "$M_procs" --quiet-ms "$M_quiet" --settle-ms "$M_settle" \
    > "$work/M.json" 2> "$work/M.log" || { tail -n 5 "$work/M.log" >&2; die "member_lists.js failed"; }
  echo "M_uptime_after=$(uptime)" >> "$work/meta.env"
  kill -0 "$gw_pid" 2> /dev/null || die "the gateway died during case M"
  # the same-run floors of the largest size: each phase's frames with plain send()
  FLOOR_DUR="$M_floor_dur" floor M-lists-floor M m-floor-args "$work/M.json" lists
  FLOOR_DUR="$M_floor_dur" floor M-top-floor M m-floor-args "$work/M.json" top10
fi

# ---- H: standings at a moment at any depth (issue 27) ----------------------------------------
# H_changes changes (a set of each of H_members members, then random incrs)
# through the gateway to histfull (history = full) and, first, the same to
# histcap (capped log): writes/s, Redis CPU per write, log memory; then `get`
# at 10 moments of histfull's period (top 10, page at rank H_members/2,
# around), tests/bench/hist_depth.js. The full size is set by
# RC_BENCH_H_MEMBERS / RC_BENCH_H_CHANGES (default 100,000 / 1,000,000).
if want H; then
  echo "run.sh: case H: hist_depth.js --members $H_members --changes $H_changes --reps $H_reps" >&2
  echo "load_H=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/meta.env"
  echo "H_uptime=$(uptime)" >> "$work/meta.env"
  H_undo="$(sed -nE 's/^history_undo_max[[:space:]]*=[[:space:]]*([0-9]+).*/\1/p' "$conf")"
  H_every="$(sed -nE 's/^history_checkpoint_every[[:space:]]*=[[:space:]]*([a-z0-9]+).*/\1/p' "$conf")"
  # (auto: the gateway sizes it by the board; hist_depth.js reads it off
  # the checkpoints made)
  case "$H_every" in auto | '') H_every=auto ;; off) H_every=0 ;; esac
  echo "H_history=history_undo_max ${H_undo:-10000}, history_checkpoint_every ${H_every}" >> "$work/meta.env"
  timeout 3600 node "$root/tests/bench/hist_depth.js" --port "$gw_port" --key "$key" --redis-port "$redis_port" \
    --redis-pid "$redis_pid" --hz "$(getconf CLK_TCK)" --members "$H_members" --changes "$H_changes" --reps "$H_reps" \
    --ckpt-every "$H_every" \
    > "$work/H.json" 2> "$work/H.log" || { tail -n 5 "$work/H.log" >&2; die "hist_depth.js failed"; }
  kill -0 "$gw_pid" 2> /dev/null || die "the gateway died during case H"
fi

# ---- the report ----------------------------------------------------------------------------
args=(report "$work" --cases "$only")
if [ "$smoke" = 1 ]; then args+=(--smoke); else args+=(--out "$out"); fi
node "$root/tests/bench/report.js" "${args[@]}"
