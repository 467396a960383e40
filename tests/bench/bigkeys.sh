#!/usr/bin/env bash
# bigkeys.sh - issue 10 "Big keys": what a board of a million members costs
# Redis, and what freeing one costs everybody else. Prints a Markdown section
# (BENCHMARKS.md, "Big keys (issue 10)"); writes nothing in the repository.
#
#   bash tests/bench/bigkeys.sh          1,000,000 members (about 2 minutes, < 1 GB)
#   environment: BIGKEYS_N       members of the big boards (default 1000000)
#                BIGKEYS_SMALL   members of the small board (default 10000)
#                BIGKEYS_REPS    requests per latency figure (default 20000)
#                (a toy run: BIGKEYS_N=20000 BIGKEYS_SMALL=1000 BIGKEYS_REPS=500)
#
# What it does: starts its own redis-server on a free loopback port (never
# 6379) with conf/redis.conf as shipped (lazyfree-lazy-*, keyspace events)
# except the port, bind 127.0.0.1, no AOF and no snapshot (the fills would
# otherwise measure the disk), in a temporary directory; stops it on exit
# (trap, also on Ctrl-C and on the time limit of 10 minutes).
#
# Boards are filled with the key shapes lua/write.lua stores, by ZADD
# through `redis-cli --pipe` (a million EVALSHAs of write.lua would take
# minutes and measure the script, not the keys):
#   single-field  `demo` as shipped: rc:{demo|}:z, composite = points * 2^29 +
#                 tie-break slot (29 bits: 1s over 3650d), members m:%012d
#   multi-field   `clears` as shipped (16 + 8 + 27 bits, tiebreak = none):
#                 rc:{clears|}:z alone: write.lua reads a member's fields back
#                 from its composite and keeps no hash per member (it used to
#                 keep rc:{clears|}:f:MEMBER, about 150 bytes more per member)
# Then it measures:
#   1. memory per member: INFO used_memory after the fill minus before, / N
#   2. latency (redis-benchmark, 1 client, one request at a time, p50/p99) of
#      EVALSHA lua/read.lua range 0..9, read.lua rank of a random member and
#      lua/write.lua incr 1 of a random member, on a board of BIGKEYS_SMALL and
#      one of BIGKEYS_N members; the KEYS/ARGV shapes of core/rc_read_args.c
#      and core/rc_write_args.c for `demo`
#   3. a reset of the N-member board (EVALSHA lua/admin.lua reset, the KEYS and
#      ARGV of core/rc_admin_args.c) while tests/bench/bigkeys_watch.js sends
#      PING every 1 ms on another connection: the reset's own time and the
#      PINGs' p50/p99/max around it; then, for comparison, DEL of the same set
#      with lazyfree as shipped and DEL with every lazyfree-lazy-* off (what a
#      Redis without conf/redis.conf does), each after a fresh fill.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
N="${BIGKEYS_N:-1000000}"
SMALL="${BIGKEYS_SMALL:-10000}"
REPS="${BIGKEYS_REPS:-20000}"
LIMIT_S=600

for tool in redis-server redis-cli redis-benchmark node awk; do
  command -v "$tool" > /dev/null || { echo "bigkeys.sh: $tool is missing" >&2; exit 1; }
done

work="$(mktemp -d /tmp/rankcast-bigkeys.XXXXXX)"
redis_pid=""
watchdog=""
port=""
cleanup() {
  if [ -n "$redis_pid" ] && kill -0 "$redis_pid" 2> /dev/null; then
    redis-cli -p "$port" shutdown nosave > /dev/null 2>&1 || kill "$redis_pid" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$redis_pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$redis_pid" 2> /dev/null || true
  fi
  if [ -n "$watchdog" ]; then kill "$watchdog" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "bigkeys.sh: stopped (a signal, or over the ${LIMIT_S}s limit)" >&2; exit 130' INT TERM
# The whole run is bounded: the watchdog sends TERM after LIMIT_S (the trap
# runs once the step in progress ends; each has its own timeout). Its sleep
# holds none of our output (a pipe reading this script would wait for it),
# and goes when the watchdog is killed.
( sleep "$LIMIT_S" & s=$!; trap 'kill "$s" 2> /dev/null; exit 0' TERM; wait "$s" && kill -TERM $$ ) > /dev/null 2>&1 &
watchdog=$!

die() { echo "bigkeys.sh: $*" >&2; [ -f "$work/redis.log" ] && tail -n 20 "$work/redis.log" >&2; exit 1; }

# A loopback port nothing listens on (the rule of tests/bench/run.sh), never 6379.
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 12000))
    [ "$p" = 6379 ] && continue
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

port="$(free_port)" || die "no free port"
redis-server "$root/conf/redis.conf" --port "$port" --bind 127.0.0.1 --dir "$work" \
  --logfile "$work/redis.log" --appendonly no --save "" > /dev/null 2>&1 &
redis_pid=$!
rc() { timeout 120 redis-cli -p "$port" "$@"; }
for _ in $(seq 100); do rc ping > /dev/null 2>&1 && break; sleep 0.1; done
[ "$(rc ping 2> /dev/null)" = PONG ] || die "redis-server did not start"

info() { rc info "$1" | tr -d '\r' | awk -F: -v k="$2" '$1 == k { print $2 }'; }
lazy_settle() { # waits until no lazy free is pending (bounded)
  for _ in $(seq 600); do [ "$(info memory lazyfree_pending_objects)" = 0 ] && return 0; sleep 0.05; done
  die "lazy free still pending after 30 s"
}
used() { lazy_settle; info memory used_memory; }

# ---- fills (RESP through redis-cli --pipe) -------------------------------------------------
# fill_zset KEY COUNT: members m:%012d (redis-benchmark's __rand_int__ shape),
# points spread over 0..999,999, composite = points * 2^29 + a fixed slot
fill_zset() {
  awk -v key="$1" -v n="$2" 'BEGIN {
    batch = 1000; scale = 536870912; slot = 400000000
    for (i = 0; i < n; i += batch) {
      m = (n - i < batch) ? n - i : batch
      printf "*%d\r\n$4\r\nZADD\r\n$%d\r\n%s\r\n", 2 + 2 * m, length(key), key
      for (j = i; j < i + m; j++) {
        c = sprintf("%.0f", ((j * 7919) % 1000000) * scale + slot)
        mem = sprintf("m:%012d", j)
        printf "$%d\r\n%s\r\n$%d\r\n%s\r\n", length(c), c, length(mem), mem
      }
    }
  }' | timeout 300 redis-cli -p "$port" --pipe > "$work/pipe.log" 2>&1 || die "fill of $1 failed: $(tail -n 3 "$work/pipe.log")"
  [ "$(rc zcard "$1")" = "$2" ] || die "fill of $1: ZCARD is not $2"
}

# fill_fields COUNT: the `clears` board: its set (the fields are in each composite)
fill_fields() {
  awk -v n="$1" 'BEGIN {
    z = "rc:{clears|}:z"
    for (j = 0; j < n; j++) {
      mem = sprintf("m:%012d", j)
      cl = (j * 7919) % 65536; rv = j % 256; fc = (j * 104729) % 134217728
      acc = sprintf("%.0f", (cl * 256 + (255 - rv)) * 134217728 + (134217727 - fc))
      printf "*4\r\n$4\r\nZADD\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(z), z, length(acc), acc, length(mem), mem
    }
  }' | timeout 300 redis-cli -p "$port" --pipe > "$work/pipe.log" 2>&1 || die "fill of clears failed: $(tail -n 3 "$work/pipe.log")"
  [ "$(rc zcard 'rc:{clears|}:z')" = "$1" ] || die "fill of clears: ZCARD is not $1"
}

# every figure is printed with thousands separators
fmt() { node -e 'console.log(Number(process.argv[1]).toLocaleString("en-US"))' "$1"; }

started="$(date -u '+%Y-%m-%d %H:%M UTC')"
load="$(cut -d' ' -f1-3 /proc/loadavg)"
commit="$(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo unknown)"

# ---- 1. memory per member ------------------------------------------------------------------
base="$(used)"
fill_zset 'rc:{demo|}:z' "$N"
after_single="$(used)"
fill_fields "$N"
after_multi="$(used)"
single_pm=$(( (after_single - base) / N ))
multi_pm=$(( (after_multi - after_single) / N ))
enc_z="$(rc object encoding 'rc:{demo|}:z')"
rc unlink 'rc:{clears|}:z' > /dev/null
lazy_settle

# ---- 2. reads and writes at SMALL vs N members ---------------------------------------------
fill_zset 'rc:{small|}:z' "$SMALL"
read_sha="$(rc script load "$(cat "$root/lua/read.lua")")"
write_sha="$(rc script load "$(cat "$root/lua/write.lua")")"
admin_sha="$(rc script load "$(cat "$root/lua/admin.lua")")"
now_ms="$(date +%s%3N)"
# give each board a history (seq, log, epoch) as the gateway's writes would
for b in demo small; do
  rc evalsha "$write_sha" 10 "rc:{$b|}:z" "rc:{$b|}:seq" "rc:{$b|}:log" "rc:{$b|}:req:" "rc:{$b|}:f:m:000000000000" \
    "rc:{$b|}:ch" "rc:{$b|}:z" "rc:{$b|}:blocked" "rc:{$b|}:epoch" "rc:{$b|}:arr" \
    incr m:000000000000 1 "$now_ms" 400000000 536870912 desc -16777215 16777215 "" 86400 1000 replace 0 0 0 PUBLISH 0 "" > /dev/null
done

# bench LABEL RANGE WORD...: one line "p50 p99 rps" from redis-benchmark's CSV
bench() {
  local range="$1"; shift
  timeout 180 redis-benchmark -p "$port" -c 1 -n "$REPS" -r "$range" --csv "$@" 2> /dev/null |
    tr -d '"' | awk -F, 'NR == 2 { printf "%s %s %.0f\n", $5, $7, $2 }'
}
read_keys() { echo "rc:{$1|}:z rc:{$1|}:seq rc:{$1|}:log rc:{$1|}:epoch rc:{$1|}:frz rc:{$1|}:fz"; }
declare -A lat
for b in small demo; do
  size=$SMALL; [ "$b" = demo ] && size=$N
  # shellcheck disable=SC2046
  lat[$b.top]="$(bench "$size" evalsha "$read_sha" 6 $(read_keys "$b") range desc 0 0 9 536870912)"
  # shellcheck disable=SC2046
  lat[$b.rank]="$(bench "$size" evalsha "$read_sha" 6 $(read_keys "$b") rank desc 0 m:__rand_int__)"
  lat[$b.write]="$(bench "$size" evalsha "$write_sha" 10 "rc:{$b|}:z" "rc:{$b|}:seq" "rc:{$b|}:log" "rc:{$b|}:req:" \
    "rc:{$b|}:f:m:__rand_int__" "rc:{$b|}:ch" "rc:{$b|}:z" "rc:{$b|}:blocked" "rc:{$b|}:epoch" "rc:{$b|}:arr" \
    incr m:__rand_int__ 1 "$now_ms" 400000000 536870912 desc -16777215 16777215 "" 86400 1000 replace 0 0 0 PUBLISH 0 "")"
  for k in top rank write; do [ -n "${lat[$b.$k]}" ] || die "redis-benchmark gave no figure for $b $k"; done
done
[ "$(rc zcard 'rc:{demo|}:z')" = "$N" ] || die "the writes changed the board's size"
rc unlink 'rc:{small|}:z' > /dev/null

# ---- 3. freeing the N-member board while PING is measured ----------------------------------
watch() { timeout 120 node "$root/tests/bench/bigkeys_watch.js" "$port" 1000 1000 "$@"; }
lazy_count() { info memory lazyfreed_objects; }
admin_reset=(evalsha "$admin_sha" 11 'rc:{demo|}:z' 'rc:{demo|}:seq' 'rc:{demo|}:log' 'rc:{demo|}:ch'
  'rc:{demo|}:blocked' 'rc:{demo|}:f:-' 'rc:{demo|}:req::reversed' 'rc:{demo|}:epoch' 'rc:{demo|}:arr'
  'rc:{demo|}:frz' 'rc:{demo|}:fz'
  reset "" 0 "$now_ms" desc 400000000 536870912 -16777215 16777215 1000 0 PUBLISH 0123456789abcdef)
# free_case LABEL WORD...: the command under watch, and how many objects went to the lazy-free thread
declare -A free
free_case() {
  local label="$1"; shift
  local before_lazy line
  before_lazy="$(lazy_count)"
  line="$(watch "$@")" || die "watch of $label failed"
  lazy_settle
  [ "$(rc exists 'rc:{demo|}:z')" = 0 ] || die "$label left the board"
  free[$label]="$line	$(( $(lazy_count) - before_lazy ))"
}
# what stays O(N) on the main thread: a freeze's copy (lua/freeze.lua) and a
# decay = scale step (lua/scale.lua's ZUNIONSTORE onto the set itself)
work_case() {
  local label="$1"; shift
  free[$label]="$(watch "$@")" || die "watch of $label failed"
  lazy_settle
}
work_case copy copy 'rc:{demo|}:z' 'rc:{demo|}:fz' replace
rc unlink 'rc:{demo|}:fz' > /dev/null
lazy_settle
work_case scale zunionstore 'rc:{demo|}:z' 1 'rc:{demo|}:z' weights 0.5
free_case reset "${admin_reset[@]}"
fill_zset 'rc:{demo|}:z' "$N"
free_case del_lazy del 'rc:{demo|}:z'
fill_zset 'rc:{demo|}:z' "$N"
# an expired period: the active expiry cycle (hz 10) takes the key within ~100 ms
free_case expire_lazy pexpire 'rc:{demo|}:z' 1
rc config set lazyfree-lazy-user-del no > /dev/null
rc config set lazyfree-lazy-server-del no > /dev/null
rc config set lazyfree-lazy-expire no > /dev/null
fill_zset 'rc:{demo|}:z' "$N"
free_case del_sync del 'rc:{demo|}:z'
fill_zset 'rc:{demo|}:z' "$N"
free_case expire_sync pexpire 'rc:{demo|}:z' 1

finished="$(date -u '+%H:%M UTC')"

# ---- the report ----------------------------------------------------------------------------
row_lat() { # label key
  local s50 s99 srps b50 b99 brps
  read -r s50 s99 srps <<< "${lat[small.$2]}"
  read -r b50 b99 brps <<< "${lat[demo.$2]}"
  echo "| $1 | $s50 / $s99 ms | $(fmt "$srps") | $b50 / $b99 ms | $(fmt "$brps") |"
}
row_free() { # label what
  local cmd n p50 p99 max lazy
  IFS=$'\t' read -r cmd n p50 p99 max _ _ lazy <<< "${free[$1]}"
  echo "| $2 | $cmd ms | $p50 / $p99 / **$max** ms ($n PINGs) | $lazy |"
}

row_work() { # label what
  local cmd n p50 p99 max
  IFS=$'\t' read -r cmd n p50 p99 max _ <<< "${free[$1]}"
  echo "| $2 | $cmd ms | $p50 / $p99 / **$max** ms ($n PINGs) |"
}

# shellcheck disable=SC2016 # the backquotes in the labels are Markdown
cat << EOF
### Big keys (issue 10)

Measured with \`bash tests/bench/bigkeys.sh\` on $commit, $started–$finished, on this
**shared 2-core VM** (load average $load at the start; other sessions may have been
running): treat the figures as rough. $(redis-server --version | cut -d' ' -f3 | tr -d 'v=') with
conf/redis.conf as shipped (lazyfree-lazy-user-del, -expire, -server-del yes) except no AOF;
boards filled by \`redis-cli --pipe\` with the keys lua/write.lua stores (ZADD of composite
scores; a multi-field member's fields are in its composite), not through the script.

**Memory per member** (INFO \`used_memory\` after the fill minus before, / $(fmt "$N"); members
\`m:%012d\`, 14 bytes):

| board | per member | encoding |
| --- | --- | --- |
| single-field (\`demo\`: one ZSET) | $single_pm bytes | $enc_z |
| multi-field (\`clears\`, 3 fields read back from the composite: the ZSET alone) | $multi_pm bytes | $enc_z |

**Cost of a call** (\`redis-benchmark -c 1 -n $(fmt "$REPS") -r SIZE\`: one client, one request at a
time, so the latency includes the loopback round trip; random members):

| call | $(fmt "$SMALL") members p50 / p99 | req/s | $(fmt "$N") members p50 / p99 | req/s |
| --- | --- | --- | --- | --- |
$(row_lat 'top 10 (read.lua range 0..9, with the tie unit)' top)
$(row_lat 'rank (read.lua rank)' rank)
$(row_lat 'write (write.lua incr 1)' write)

**Freeing a $(fmt "$N")-member board** while another connection sends PING every 1 ms
(\`tests/bench/bigkeys_watch.js\`; the window is every PING whose wait overlaps the command
and the 200 ms after its reply; a fresh fill before each):

| command | its time | PING p50 / p99 / max in the window | objects freed lazily (INFO lazyfreed_objects) |
| --- | --- | --- | --- |
$(row_free reset 'admin.lua reset (UNLINK), lazyfree as shipped')
$(row_free del_lazy '`DEL` of the set, lazyfree as shipped (lazy-user-del makes it an UNLINK)')
$(row_free expire_lazy '`PEXPIRE` 1 (the period ends), lazyfree as shipped')
$(row_free del_sync '`DEL` of the set, every lazyfree-lazy-* off')
$(row_free expire_sync '`PEXPIRE` 1, every lazyfree-lazy-* off')

**What stays O(N) on the main thread** (same watch, lazyfree as shipped, on the
$(fmt "$N")-member set):

| command | its time | PING p50 / p99 / max in the window |
| --- | --- | --- |
$(row_work copy '`COPY z fz REPLACE` (lua/freeze.lua, a freeze)')
$(row_work scale '`ZUNIONSTORE z 1 z WEIGHTS 0.5` (lua/scale.lua, one decay = scale step)')
EOF
