-- freeze.lua - freeze and reveal (PROTOCOL v1.1, "Freeze and reveal") for one
-- board period, atomically: the audience's standings are a frozen copy of the
-- set, moved forward only by reveals, while writes go on to the live set.
--
-- KEYS[1] rc:{B|P}:z      the live set        KEYS[2] rc:{B|P}:seq
-- KEYS[3] rc:{B|P}:log    the change log      KEYS[4] rc:{B|P}:ch  (events)
-- KEYS[5] rc:{B|P}:epoch  the board's epoch (see "Epochs" in lua/write.lua)
-- KEYS[6] rc:{B|P}:frz    the freeze state, a hash:
--           on     "1" while frozen, "0" after the unfreeze
--           seq    S, the seq the board was frozen at
--           shown  R, the seq the audience sees (S, then each reveal's end)
--           epoch  the board's epoch at the freeze ("" when it had none)
--           v      the freeze version: +1 on every freeze, reveal, unfreeze
--                  and reset, never reset itself while the hash lives, so a
--                  gateway orders what it hears of the state (reads, events)
-- KEYS[7] rc:{B|P}:fz     the frozen copy: the set as of seq R
--
-- ARGV[1] action: freeze | reveal | state
-- ARGV[2] reveal: the number of changes to reveal (1..), or "all"
-- ARGV[3] PUBLISH on one Redis, SPUBLISH on a cluster
--
-- A freeze holds only in the history it was made in: when the board's
-- epoch is no longer the one recorded (the set deleted from outside, a
-- lost Redis), the freeze is void and reads show the live set (lua/read.lua
-- applies the same rule).
--
-- Reveal: the next N hidden changes (seq R+1 ..) are taken from the change
-- log, in order, and applied to the frozen copy. When the log no longer
-- holds the next one (more changes were hidden than the board's log_cap),
-- the first step crosses the whole gap at once: the frozen copy becomes the
-- live set with every change the log still holds undone (each event has the
-- member's composite before it, "old_c"), that is the board as of the seq
-- right before the oldest logged change; the reply and the event say how
-- many changes that step merged ("skipped"). "all" drops the copy and the
-- audience sees the live set again (unfrozen).
--
-- Events (on KEYS[4], in order with the change events; never in the log):
--   {"ctl":"freeze","v":V,"frozen":S,"shown":S}
--   {"ctl":"reveal","v":V,"frozen":S,"from":R0,"shown":R,"skipped":K}
--   {"ctl":"unfreeze","v":V,"from":R0,"shown":SEQ}
--
-- Reply: { status, frozen (1|0), S, R, seq, v, skipped, changed (1|0) }
--   status "ok"; R is what the audience sees (seq when not frozen)

local z, seqkey, logkey, chan, ekey, fkey, fz = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local action, steps_arg = ARGV[1], ARGV[2]
local pubcmd = ARGV[3] == 'SPUBLISH' and 'SPUBLISH' or 'PUBLISH'

local function num(x) return string.format('%.17g', x) end
local function seq_now() return tonumber(redis.call('GET', seqkey) or '0') end

-- the rule of lua/write.lua, "Epochs"
local function epoch_now()
  local e = redis.call('HMGET', ekey, 'id', 'empty')
  if not e[1] or redis.call('EXISTS', seqkey) == 0 then return '' end
  if e[2] ~= '1' and redis.call('EXISTS', z) == 0 then return '' end
  return e[1]
end

local st = redis.call('HMGET', fkey, 'on', 'seq', 'shown', 'epoch', 'v')
local v = tonumber(st[5] or '0')
local frozen = st[1] == '1' and (st[4] == '' or st[4] == epoch_now())
local S, R = tonumber(st[2] or '0'), tonumber(st[3] or '0')
local cur = seq_now()
if st[1] == '1' and not frozen then
  -- a void freeze (its history is gone): put it away. Reads already report
  -- it as not frozen at version v + 1 (lua/read.lua), so this is that state.
  redis.call('UNLINK', fz)
  v = redis.call('HINCRBY', fkey, 'v', 1)
  redis.call('HSET', fkey, 'on', '0')
  S, R = 0, 0
end

-- the period's keys expire together: the freeze's go with them
local function keep_ttl(key)
  local ttl = redis.call('PTTL', seqkey)
  if ttl > 0 then redis.call('PEXPIRE', key, ttl) else redis.call('PERSIST', key) end
end

local function copy_live()
  if redis.call('EXISTS', z) == 1 then
    -- O(N) on Redis' main thread (tests/bench/bigkeys.sh measures it); a
    -- copy REPLACE drops is freed by lazyfree-lazy-server-del
    redis.call('COPY', z, fz, 'REPLACE')
    keep_ttl(fz)
  else
    redis.call('UNLINK', fz)
  end
end

local function answer(changed, skipped)
  if frozen then return { 'ok', 1, S, R, cur, v, skipped, changed } end
  return { 'ok', 0, 0, cur, cur, v, skipped, changed }
end

if action == 'state' then
  return answer(0, 0)
end

if action == 'freeze' then
  if frozen then return answer(0, 0) end
  copy_live()
  S, R = cur, cur
  v = redis.call('HINCRBY', fkey, 'v', 1)
  redis.call('HSET', fkey, 'on', '1', 'seq', S, 'shown', R, 'epoch', epoch_now())
  keep_ttl(fkey)
  frozen = true
  redis.call(pubcmd, chan, '{"ctl":"freeze","v":' .. v .. ',"frozen":' .. S .. ',"shown":' .. R .. '}')
  return answer(1, 0)
end

if action ~= 'reveal' then return redis.error_reply('freeze.lua: unknown action ' .. tostring(action)) end
if not frozen then return answer(0, 0) end

-- the seq of the oldest change the log holds (cur + 1 when it holds none)
local first = cur + 1
local head = redis.call('LINDEX', logkey, 0)
if head then first = tonumber(string.match(head, '^{"seq":(%d+)')) or first end

local from = R
local skipped = 0
if steps_arg == 'all' then
  if R + 1 < first and R < cur then skipped = math.min(first - 1, cur) - R end
  redis.call('UNLINK', fz)
  v = redis.call('HINCRBY', fkey, 'v', 1)
  redis.call('HSET', fkey, 'on', '0', 'shown', cur)
  keep_ttl(fkey)
  frozen = false
  redis.call(pubcmd, chan, '{"ctl":"unfreeze","v":' .. v .. ',"from":' .. from .. ',"shown":' .. cur .. '}')
  return answer(1, skipped)
end

local n = tonumber(steps_arg)
if not n or n < 1 or n ~= math.floor(n) then
  return redis.error_reply('freeze.lua: steps must be a whole number from 1, or "all"')
end
if R >= cur then return answer(0, 0) end -- nothing hidden

if R + 1 < first then
  -- the gap: the log no longer holds R+1 ..; this step lands on the seq
  -- right before its oldest change (the live set with every logged change
  -- undone, newest first)
  local g = math.min(first - 1, cur)
  copy_live()
  local entries = redis.call('LRANGE', logkey, 0, -1)
  for i = #entries, 1, -1 do
    local ev = cjson.decode(entries[i])
    if ev.seq > g and ev.member then
      if ev.old_c == nil or ev.old_c == cjson.null then
        redis.call('ZREM', fz, ev.member)
      else
        redis.call('ZADD', fz, num(ev.old_c), ev.member)
      end
    end
  end
  skipped = g - R
  R = g
  n = n - 1
end

if n > 0 and R < cur then
  local take = math.min(n, cur - R)
  local at = R + 1 - first -- 0-based index of seq R+1 in the log
  local entries = redis.call('LRANGE', logkey, at, at + take - 1)
  for i = 1, #entries do
    local ev = cjson.decode(entries[i])
    if ev.member then
      if ev.c == nil or ev.c == cjson.null then
        redis.call('ZREM', fz, ev.member)
      else
        redis.call('ZADD', fz, num(ev.c), ev.member)
      end
    end
    R = ev.seq
  end
end

v = redis.call('HINCRBY', fkey, 'v', 1)
redis.call('HSET', fkey, 'shown', R)
redis.call(pubcmd, chan, '{"ctl":"reveal","v":' .. v .. ',"frozen":' .. S .. ',"from":' .. from ..
  ',"shown":' .. R .. ',"skipped":' .. skipped .. '}')
return answer(1, skipped)
