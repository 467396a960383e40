-- rebuild.lua - one rebuild of a hot board (decay = buckets): the window's
-- buckets, weighted, become the read board in one atomic step.
--
-- Runs only for the holder of the board's rebuild lock, so several gateways
-- never rebuild at once (gateway/gw_decay.c takes and renews the lock). The
-- union goes to a temp key that is RENAMEd onto the read key, and the read
-- key gets a short TTL: if the rebuild job dies, the board disappears instead
-- of freezing in a stale state. Viewers learn of the new board through the
-- keyspace notifications of the RENAME (or the DEL of an empty window).
-- Every key shares the board's hash tag {B|} (one cluster slot); time and
-- weights come from the gateway, never from Redis' clock.
--
-- KEYS[1..N]  rc:{B|}:b:INDEX   the window's buckets (any order; missing ones count as empty)
-- KEYS[N+1]   rc:{B|}:tmp       scratch key for the union
-- KEYS[N+2]   rc:{B|}:z         the read board
-- KEYS[N+3]   rc:{B|}:seq       board version
-- KEYS[N+4]   rc:{B|}:lock      the rebuild lock
-- KEYS[N+5]   rc:{B|}:rebuilds  rebuild counter
--
-- ARGV[1]       the caller's lock token
-- ARGV[2..N+1]  the weight of each bucket, in KEYS order (decimal)
-- ARGV[N+2]     TTL of the read board, ms (result_ttl)
--
-- Reply: the number of members on the rebuilt board (0: the window is empty
-- and the read board was deleted), or -1 when the token does not hold the
-- lock (nothing was touched). An idle board (empty window, no read board) is
-- left alone: no seq bump, no count, so a board nobody writes to costs
-- nothing but its lock.

local n = #KEYS - 5
if n < 1 or #ARGV ~= n + 2 then
  return redis.error_reply('ERR rebuild.lua: needs N bucket keys + 5 and N weights + 2 args')
end
local tmp, z, seqkey, lock, counter = KEYS[n + 1], KEYS[n + 2], KEYS[n + 3], KEYS[n + 4], KEYS[n + 5]
local ttl = tonumber(ARGV[n + 2])

if redis.call('GET', lock) ~= ARGV[1] then return -1 end

local args = { 'ZUNIONSTORE', tmp, n }
for i = 1, n do args[#args + 1] = KEYS[i] end
args[#args + 1] = 'WEIGHTS'
for i = 1, n do args[#args + 1] = ARGV[i + 1] end
local count = redis.call(unpack(args))

if count > 0 then
  -- the old read board goes with the RENAME: conf/redis.conf's
  -- lazyfree-lazy-server-del frees it off the main thread
  redis.call('RENAME', tmp, z)
  redis.call('PEXPIRE', z, ttl)
elseif redis.call('UNLINK', z) == 0 then -- UNLINK: the last read board may be big
  -- an empty union stores nothing (tmp does not exist), and there was no
  -- board to empty: nothing changed
  return 0
end
redis.call('INCR', seqkey)
redis.call('INCR', counter)
return count
