-- teams.lua - recomputes team board T from its source board B, atomically
-- (docs/teams.md): after an admin op on B (remove, reverse: the member's
-- points changed outside lua/write.lua), after an import, and for operators
-- (`rankcast teams rebuild B`) after changes made outside rankcast (a
-- redis-cli ZADD on B cannot update team sums by itself).
--
-- KEYS[1] rc:{B|P}:z       the source board
-- KEYS[2] rc:{B|P}:tm      membership: member -> team, "#"..team -> member count
--                          (the period's own on a periodic board: lua/write.lua)
-- KEYS[3..7] T's z, seq, log, ch, epoch: rc:{B|P}{T}:z ... (B's tag)
--
-- ARGV[1] mode: rebuild | reset
-- ARGV[2] at (ms)           ARGV[3] tie-break slot of now (a changed sum takes it)
-- ARGV[4] 2^tie-break bits  ARGV[5] order: desc | asc
-- ARGV[6] log cap           ARGV[7] PUBLISH | SPUBLISH
-- ARGV[8] a fresh epoch id from the gateway ("" lets the script make one)
-- ARGV[9] periodic boards: ms until the period's keys expire (T's keys
--         renewed with it), else 0
-- ARGV[10] "1" on a periodic board: a rebuild of a period whose membership
--         is not seeded yet answers { "team_unseeded", 0, 0 } and changes
--         nothing (the gateway seeds it first, as for lua/write.lua)
--
-- rebuild: a team's points are the sum of its members' points on B (the
-- rule lua/write.lua keeps write by write). A team is on T while it has
-- members and either is on T already or one of its members has points (a
-- team leaves T only with its last member); its member counts are counted
-- again. Every team whose sum changed gets an event (op "rebuild", the
-- shape of lua/write.lua's), one seq each; a team unchanged keeps its place.
-- reset: T is emptied (B was reset): a new epoch and one "reset" event, as
-- lua/admin.lua resets a board; the membership stays.
--
-- Reply: { "ok", teams changed, T's seq }
--
-- roster_at (read only; docs/history.md, "Rosters at a moment"): the members
-- of one team at a past moment of B, from the present membership and the
-- membership's log (lua/write.lua, op team) undone back to it.
--   KEYS[1] rc:{B|}:tm  KEYS[2] rc:{B|}:tml  KEYS[3] rc:{B|}:seq
--   ARGV[1] roster_at  ARGV[2] the team id  ARGV[3] seq | time  ARGV[4] S or MS
--   By seq, the membership until B's change S+1 (changes logged with a
--   bseq after S undone); by time, at MS (changes after MS undone).
--   Reply: { "ok", n, member1, ... } (sorted by name), or { "gone", oldest
--   seq } when the log does not reach back that far (its header's from,
--   from_at).
--
-- seed: a period's membership starts as a copy of the latest earlier
-- period's (docs/teams.md, "Periods"), read by the gateway from that
-- period's slot and passed here, on the new period's slot.
--   KEYS[1] rc:{B|P}:tm  KEYS[2] rc:{B|P}:tml
--   ARGV[1] seed  ARGV[2] ms until the copy expires (0: never; a finished
--   period's expires with its keys)  ARGV[3..] field, value pairs of the
--   earlier membership (its "#" version and "#TEAM" counts too; none: an
--   empty membership)
--   Writes nothing when KEYS[1] exists (another gateway seeded it first):
--   { "exists" }; else copies the pairs, makes sure "#" is there (a seeded
--   membership always has it: lua/write.lua tells a seeded period by the
--   hash existing), starts the log with a header from seq 0 (the copy is
--   the period's membership from its start) and answers { "seeded" }.
--
-- point: the board's pointer to its latest seeded period, rc:{B|}:tmp
-- ("START_MS PERIOD"), moved forward only (a gateway with an older period
-- never moves it back). KEYS[1] rc:{B|}:tmp  ARGV[2] start ms  ARGV[3] id.
--   Reply: 1 moved, 0 not.

if ARGV[1] == 'roster_at' then
  local tmk, tml, team, by_time, target = KEYS[1], KEYS[2], ARGV[2], ARGV[3] == 'time', tonumber(ARGV[4])
  local log = redis.call('LRANGE', tml, 0, -1)
  local from, from_at = 0, 0
  if #log > 0 then
    from, from_at = string.match(log[1], '^{"from":(%d+),"from_at":([^}]+)}')
    from, from_at = tonumber(from), tonumber(from_at)
  elseif redis.call('EXISTS', tmk) == 1 then
    -- a membership that never went through the op (older data, redis-cli):
    -- only the present is known (B's present seq)
    from = tonumber(redis.call('GET', KEYS[3]) or '0')
    from_at = math.huge
  end
  if (by_time and target < from_at) or (not by_time and target < from) then return { 'gone', from } end
  -- newest first: each member's team then is the "old" of its first change after the moment
  local was = {}
  for i = #log, 2, -1 do
    local e = log[i]
    local bseq, at = string.match(e, '^{"bseq":(%d+),"at":([^,]+)')
    if (by_time and tonumber(at) <= target) or (not by_time and tonumber(bseq) <= target) then break end
    local m = string.match(e, '"member":"([^"]*)"')
    local old = string.match(e, '"old":"([^"]*)"') or ''
    was[m] = old
  end
  local out = {}
  local all = redis.call('HGETALL', tmk)
  for i = 1, #all, 2 do
    local m = all[i]
    if string.sub(m, 1, 1) ~= '#' and was[m] == nil and all[i + 1] == team then out[#out + 1] = m end
  end
  for m, t in pairs(was) do
    if t == team then out[#out + 1] = m end
  end
  table.sort(out)
  local reply = { 'ok', #out }
  for i = 1, #out do reply[#reply + 1] = out[i] end
  return reply
end

if ARGV[1] == 'seed' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return { 'exists' } end
  local i = 3
  while i + 1 <= #ARGV do -- in slices: unpack has a stack limit
    local j = math.min(i + 999, #ARGV)
    if (j - i) % 2 == 0 then j = j - 1 end
    redis.call('HSET', KEYS[1], unpack(ARGV, i, j))
    i = j + 1
  end
  redis.call('HSETNX', KEYS[1], '#', '0')
  redis.call('UNLINK', KEYS[2])
  redis.call('RPUSH', KEYS[2], '{"from":0,"from_at":0}')
  local ttl = tonumber(ARGV[2]) or 0
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[1], ttl)
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
  return { 'seeded' }
end

if ARGV[1] == 'point' then
  local cur = redis.call('GET', KEYS[1])
  local at = cur and tonumber(string.match(cur, '^(-?%d+) '))
  if at and at >= tonumber(ARGV[2]) then return 0 end
  redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. ARGV[3])
  return 1
end

local z, tm, tz, tseqkey, tlogkey, tchan, tekey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local mode, at, slot = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local scale, desc = tonumber(ARGV[4]), ARGV[5] == 'desc'
local logcap, pubcmd = tonumber(ARGV[6]), ARGV[7] == 'SPUBLISH' and 'SPUBLISH' or 'PUBLISH'
local epoch_arg = ARGV[8] or ''
if #epoch_arg > 32 or not string.match(epoch_arg, '^[%w]*$') then epoch_arg = '' end
local ttl = tonumber(ARGV[9] or '0') or 0

-- T's keys go with the period's (lua/write.lua)
local function renew()
  if ttl <= 0 then return end
  for _, k in ipairs({ tz, tseqkey, tlogkey, tekey }) do redis.call('PEXPIRE', k, ttl) end
end

local function num(x) return string.format('%.17g', x) end
local function points_of(c)
  if scale == 1 then return c end
  return math.floor(c / scale)
end
local function rank_of(t)
  local r
  if desc then r = redis.call('ZREVRANK', tz, t) else r = redis.call('ZRANK', tz, t) end
  if r then return r + 1 end
  return 0
end
local function seq_now() return tonumber(redis.call('GET', tseqkey) or '0') end

local function new_epoch(empty)
  local e = epoch_arg
  if e == '' then
    local t = redis.call('TIME')
    e = string.sub(redis.sha1hex(t[1] .. '.' .. t[2] .. tz .. seq_now()), 1, 16)
  end
  redis.call('DEL', tekey)
  if empty then redis.call('HSET', tekey, 'id', e, 'empty', '1') else redis.call('HSET', tekey, 'id', e) end
  return e
end

-- the epoch rule of lua/write.lua ("Epochs"), for T
local function epoch_held()
  local e = redis.call('HMGET', tekey, 'id', 'empty')
  if not e[1] or redis.call('EXISTS', tseqkey) == 0 then return false end
  if e[2] ~= '1' and redis.call('EXISTS', tz) == 0 then return false end
  return true
end

local function record(event)
  redis.call('RPUSH', tlogkey, event)
  redis.call('LTRIM', tlogkey, -logcap, -1)
  redis.call(pubcmd, tchan, event)
end

if mode == 'reset' then
  if redis.call('EXISTS', tz, tseqkey, tlogkey) == 0 then return { 'ok', 0, 0 } end
  redis.call('UNLINK', tz)
  redis.call('UNLINK', tlogkey)
  local e = new_epoch(true)
  local seq = redis.call('INCR', tseqkey)
  record('{"seq":' .. seq .. ',"op":"reset","c":null,"old_c":null,"rank":null,"old_rank":null,"at":' ..
         num(at) .. ',"epoch":"' .. e .. '"}')
  renew()
  return { 'ok', 1, seq }
end
if mode ~= 'rebuild' then return { 'bad_request', 'unknown mode' } end
if ARGV[10] == '1' and redis.call('EXISTS', tm) == 0 then return { 'team_unseeded', 0, 0 } end

-- the sums and member counts from the membership and B
local sums, counts, scored = {}, {}, {}
local all = redis.call('HGETALL', tm)
for i = 1, #all, 2 do
  local m, t = all[i], all[i + 1]
  if string.byte(m, 1) ~= 35 then -- '#' fields are the counts
    counts[t] = (counts[t] or 0) + 1
    local c = redis.call('ZSCORE', z, m)
    if c then
      sums[t] = (sums[t] or 0) + points_of(tonumber(c))
      scored[t] = true
    end
  end
end
for i = 1, #all, 2 do
  -- (the counts; "#" alone is the membership's version, lua/write.lua: kept)
  if string.byte(all[i], 1) == 35 and all[i] ~= '#' then redis.call('HDEL', tm, all[i]) end
end
for t, n in pairs(counts) do redis.call('HSET', tm, '#' .. t, n) end

-- the changes, decided before any is made: teams in name order, so the
-- events' order is the same on every run
local on = {}
local cur = redis.call('ZRANGE', tz, 0, -1, 'WITHSCORES')
for i = 1, #cur, 2 do on[cur[i]] = tonumber(cur[i + 1]) end
local names = {}
for t in pairs(on) do names[#names + 1] = t end
for t in pairs(scored) do if not on[t] then names[#names + 1] = t end end
table.sort(names)

local fresh = nil
local changed = 0
for _, t in ipairs(names) do
  local oldc = on[t]
  local newp = nil
  if counts[t] then newp = sums[t] or 0 end
  local oldp = nil
  if oldc then oldp = points_of(oldc) end
  if newp ~= oldp then
    if not fresh and not epoch_held() then
      if redis.call('EXISTS', tz) == 0 or redis.call('EXISTS', tseqkey) == 0 then redis.call('UNLINK', tlogkey) end
      fresh = new_epoch(false)
    elseif not fresh then
      redis.call('HDEL', tekey, 'empty')
      fresh = false
    end
    local oldrank = 0
    if oldc then oldrank = rank_of(t) end
    local newc = nil
    local rank = 0
    if newp ~= nil then
      newc = newp * scale + slot
      redis.call('ZADD', tz, num(newc), t)
      rank = rank_of(t)
    else
      redis.call('ZREM', tz, t)
      if redis.call('EXISTS', tz) == 0 then redis.call('HSET', tekey, 'empty', '1') end
    end
    local seq = redis.call('INCR', tseqkey)
    local function jn(x) if x == nil then return 'null' end return num(x) end
    local function jr(r) if r == 0 then return 'null' end return tostring(r) end
    local event = '{"seq":' .. seq .. ',"member":"' .. t .. '","op":"rebuild","score":' .. jn(newp) ..
      ',"old_score":' .. jn(oldp) .. ',"c":' .. jn(newc) .. ',"old_c":' .. jn(oldc) ..
      ',"rank":' .. jr(rank) .. ',"old_rank":' .. jr(oldrank) .. ',"at":' .. num(at)
    if fresh then event = event .. ',"epoch":"' .. fresh .. '"'; fresh = false end
    record(event .. '}')
    changed = changed + 1
  end
end
if changed > 0 then renew() end
return { 'ok', changed, seq_now() }
