-- ckpt.lua - one step of a board's history checkpoint job (docs/history.md,
-- "Checkpoints"; gateway/jobs/gw_ckpt.c calls it). A checkpoint is a copy of
-- the board's sorted set exactly as it stood right after change C, kept in
-- rc:{B|P}:ck:C, so a read at a moment S <= C undoes the changes in (S, C]
-- from the copy (lua/read.lua, kind "moment") instead of every change since
-- S from the present.
--
-- The copy is built beside the writes, never inside one: each call copies
-- one slice of the live set (ZSCAN, COUNT ARGV[4]) into the build key, and
-- the writes go on between the calls. When the scan is done (at seq E)
-- more calls correct the copy from the log, a slice each: each member a
-- change in (C, E] touched gets the old_c of its first such change (removed
-- when null). A member no change after C touched held its score for the
-- whole scan, and ZSCAN returns every member present from its start to its
-- end, so the copy is then exactly the set at C. Then it becomes
-- rc:{B|P}:ck:C and joins the index.
--
-- One builder per board-period at a time: the build state (KEYS[6]) names
-- its owner's token and lives ARGV[3] ms past the owner's last call (a
-- lease: a gateway that dies mid-copy leaves it to expire, and another one
-- starts over).
--
-- KEYS[1] rc:{B|P}:z     the live set
-- KEYS[2] rc:{B|P}:seq
-- KEYS[3] rc:{B|P}:log   the change log
-- KEYS[4] rc:{B|P}:epoch (the rule of lua/write.lua, "Epochs")
-- KEYS[5] rc:{B|P}:ck    the index: a sorted set, score C, member "C:EPOCH";
--                        checkpoint C is the key KEYS[5] .. ":" .. C
-- KEYS[6] rc:{B|P}:ckb   the build state: owner, c, epoch, cursor ("fix"
--                        once the scan is done), fix (the newest change the
--                        correction has still to undo)
-- KEYS[7] rc:{B|P}:ckt   the copy being built
--
-- ARGV[1] the caller's token   ARGV[2] every: a new checkpoint once the
-- present is this many changes past the newest one (or the log's start)
-- ARGV[3] the lease, ms        ARGV[4] members per slice
-- ARGV[5] the most changes a build may start behind the present
-- ARGV[6] "1": sweep the index now (see below)
--
-- Which C: the newest checkpoint (or the log's start) plus `every`, even
-- when the present is already past it: the copy is of the present, and the
-- correction undoes every change after C whatever C is, so checkpoints stay
-- `every` apart when writes outrun a copy. A C more than ARGV[5] changes
-- behind the present (the job cannot keep up, or a board with a long log
-- and no checkpoint yet) is the present instead: a gap in the
-- checkpoints, whose moments are refused out_of_range, rather than a
-- correction that never catches up.
--
-- A sweep (at the start of each build, and every few seconds) drops the
-- checkpoints no read can use: of another epoch
-- (a reset or a lost history), older than the log's first change (a trimmed
-- log: history_max), past the present, or whose key is gone (evicted).
-- Reply: { state, dropped, C, members, seq }: members and seq the board's
--   size (ZCARD) and present seq
--   state  idle (no checkpoint due) | busy (another owner builds) | copying
--          (call again: more to copy or the correction to make) | done
--          (checkpoint C made) | aborted (the history changed under the
--          copy: a new epoch, or the log no longer holds the changes after C)

local z, seqkey, logkey, ekey, idx, bkey, tkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local token, every, lease, count = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local fixmax = tonumber(ARGV[5])
local cur = tonumber(redis.call('GET', seqkey) or '0')

-- the rule of lua/write.lua, "Epochs" (as lua/read.lua applies it)
local function epoch_now()
  local e = redis.call('HMGET', ekey, 'id', 'empty')
  if not e[1] or redis.call('EXISTS', seqkey) == 0 then return '' end
  if e[2] ~= '1' and redis.call('EXISTS', z) == 0 then return '' end
  return e[1]
end
local epoch = epoch_now()
local function seq_of(e) return tonumber(string.match(e, '^{"seq":(%d+)')) end
local nlog = redis.call('LLEN', logkey)
local first = cur + 1
if nlog > 0 then first = seq_of(redis.call('LINDEX', logkey, 0)) end

local dropped = 0
-- every reply also says the board's size (the job sizes an "auto" interval
-- by it: core/rc_conf.c, rc_conf_checkpoint_every_at) and its seq
local function reply(state, c)
  return { state, dropped, c, redis.call('ZCARD', z), cur }
end

local b = redis.call('HMGET', bkey, 'owner', 'c', 'epoch', 'cursor')
local newest = nil
-- the sweep: drops what no read can use, and finds the newest checkpoint
local function sweep()
  -- (BYSCORE commands: ZRANGE is the board reads' alone, which tests count)
  local all = redis.call('ZRANGEBYSCORE', idx, '-inf', '+inf', 'WITHSCORES')
  for i = 1, #all, 2 do
    local c, e = tonumber(all[i + 1]), string.match(all[i], '^%d+:(.*)$')
    if epoch == '' or e ~= epoch or c < first or c > cur or redis.call('EXISTS', idx .. ':' .. all[i + 1]) == 0 then
      redis.call('UNLINK', idx .. ':' .. all[i + 1])
      redis.call('ZREM', idx, all[i])
      dropped = dropped + 1
    else
      newest = c
    end
  end
end
-- the job calls often (so a build starts close to its C: less to correct);
-- an idle call looks at the newest checkpoint only, and sweeps when asked
-- (ARGV[6] "1", every few seconds), when that one is stale, or before a
-- build starts (a build of ours under way: at its next start)
if b[1] ~= token then
  local top = redis.call('ZREVRANGEBYSCORE', idx, '+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if ARGV[6] == '1' then
    sweep()
  elseif #top == 2 then
    local c, e = tonumber(top[2]), string.match(top[1], '^%d+:(.*)$')
    if epoch ~= '' and e == epoch and c >= first and c <= cur then newest = c else sweep() end
  end
end

if b[1] and b[1] ~= token then return reply('busy', 0) end
if not b[1] then
  if epoch == '' or redis.call('EXISTS', z) == 0 then return reply('idle', 0) end
  local target = (newest or (first - 1)) + every
  if target > cur then return reply('idle', 0) end
  if ARGV[6] ~= '1' then sweep() end
  target = (newest or (first - 1)) + every
  if target > cur then return reply('idle', 0) end
  if target > cur then return reply('idle', 0) end
  if cur - target > fixmax then target = cur end
  redis.call('DEL', tkey)
  redis.call('HSET', bkey, 'owner', token, 'c', target, 'epoch', epoch, 'cursor', '0')
  b = { token, tostring(target), epoch, '0' }
end
redis.call('PEXPIRE', bkey, lease)
local c = tonumber(b[2])
if b[3] ~= epoch or first > c + 1 then
  redis.call('DEL', tkey, bkey)
  return reply('aborted', c)
end

if b[4] ~= 'fix' then
  local r = redis.call('ZSCAN', z, b[4], 'COUNT', count)
  local rows, args = r[2], {}
  for i = 1, #rows, 2 do
    args[#args + 1] = rows[i + 1]; args[#args + 1] = rows[i]
    if #args >= 1000 then redis.call('ZADD', tkey, unpack(args)); args = {} end
  end
  if #args > 0 then redis.call('ZADD', tkey, unpack(args)) end
  redis.call('PEXPIRE', tkey, lease)
  -- the scan done at seq E: the correction undoes the changes in (C, E]
  if r[1] == '0' then redis.call('HSET', bkey, 'cursor', 'fix', 'fix', cur) else redis.call('HSET', bkey, 'cursor', r[1]) end
  return reply('copying', c)
end

-- the correction, one slice of count / 2 changes a call, from E down to
-- C + 1: each change sets its member back to its old composite (off the
-- copy when null), so the oldest change after C, applied last, wins. The
-- log's indexes come from seqs at each call (a trimmed log shifts them).
local hi = tonumber(redis.call('HGET', bkey, 'fix'))
local lo = math.max(c + 1, hi - math.max(1, math.floor(count / 2)) + 1)
if hi >= lo then
  local evs = redis.call('LRANGE', logkey, lo - first, hi - first)
  for i = #evs, 1, -1 do
    local e = evs[i]
    local m = string.match(e, '"member":"([^"]*)"')
    if m then
      local oc = string.match(e, '"old_c":([^,}]+)')
      if oc == nil or oc == 'null' then redis.call('ZREM', tkey, m) else redis.call('ZADD', tkey, oc, m) end
    end
  end
  redis.call('PEXPIRE', tkey, lease)
end
if lo > c + 1 then
  redis.call('HSET', bkey, 'fix', lo - 1)
  return reply('copying', c)
end
redis.call('DEL', bkey)
-- an empty set at C: nothing to keep (a read from the present is as good)
if redis.call('EXISTS', tkey) == 0 then return reply('aborted', c) end
local key = idx .. ':' .. c
redis.call('RENAME', tkey, key)
redis.call('ZADD', idx, c, c .. ':' .. epoch)
-- a periodic board's keys expire together (write.lua sets them to the
-- period's end plus `keep` periods): the checkpoints go with them
-- (RENAME keeps the build's lease: an all-time board's checkpoint must
-- lose it, or it would go 30 s after it was made)
local ttl = redis.call('PTTL', seqkey)
if ttl > 0 then
  redis.call('PEXPIRE', key, ttl)
  redis.call('PEXPIRE', idx, ttl)
else
  redis.call('PERSIST', key)
end
return reply('done', c)
