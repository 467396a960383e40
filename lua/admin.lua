-- admin.lua - the admin operations on one board period, atomically:
-- remove a member (and optionally block it), unblock, reverse a write by its
-- req, reset the board. Each change bumps seq, lands in the change log and is
-- published like a write's change, so viewers and feeds follow.
--
-- KEYS[1] rc:{B|P}:z      KEYS[2] rc:{B|P}:seq     KEYS[3] rc:{B|P}:log
-- KEYS[4] rc:{B|P}:ch     KEYS[5] rc:{B|P}:blocked  (the period's blocklist; for a
--                          periodic board the gateway also changes the board's
--                          list rc:{B|}:blocked and the next period's: see
--                          "Blocklists" in lua/write.lua and ops/gw_blocklist.c)
-- KEYS[6] rc:{B|P}:f:MEMBER (remove)  or  rc:{B|P}:req:REQ (reverse)
-- KEYS[7] rc:{B|P}:req:REQ:reversed (reverse)
-- KEYS[8] rc:{B|P}:epoch   the board's epoch (see "Epochs" in lua/write.lua)
-- KEYS[9] rc:{B|P}:arr     the arrival counters (tiebreak = arrival, see
--                          "Arrival order" in lua/write.lua)
-- KEYS[10] rc:{B|P}:frz    the freeze state, KEYS[11] rc:{B|P}:fz the frozen
--                          copy (lua/freeze.lua): a reset ends a freeze
--
-- ARGV[1] action: remove | unblock | reverse | reset
-- ARGV[2] member (remove, unblock)       ARGV[3] block: 1 | 0 (remove)
-- ARGV[4] at (ms, from the gateway)       ARGV[5] order: desc | asc
-- ARGV[6] tie-break slot for a reversal, or "arrival" (the board orders ties
--         by arrival: the reversal takes the value's next arrival)
-- ARGV[7] 2^tie-break bits
-- ARGV[8] points_min  ARGV[9] points_max  ARGV[10] log cap
-- ARGV[11] periodic boards: ms until the period's keys expire, else 0
-- ARGV[12] PUBLISH on one Redis, SPUBLISH on a cluster
-- ARGV[13] a fresh random epoch id from the gateway: a reset starts a new
--          history with it (so does any change when no epoch holds; "" lets
--          the script make one from the server's TIME)
--
-- Epochs: a reset replaces the board's epoch (KEYS[8]) in the same step as
-- it empties the board, and its event carries "epoch"; a removal that
-- leaves the board without members marks the epoch "empty" so the missing
-- set is not mistaken for one deleted from outside (lua/write.lua).
--
-- Arrival counters: a removal takes the member out of its value's holders
-- (the value's fields go with the last holder), a reversal arrives at the
-- restored value like a write (out_of_range when the value's arrivals are
-- used up; a reversal that lands on the points the member holds keeps its
-- arrival), a reset drops the counters with the set.
--
-- Reply: { status, seq, member, score, rank, detail }
--   status: "ok" | "duplicate" (reverse already done) | "bad_request" | "out_of_range"
--           | "unknown_req" (reverse: no marker for the req here; the gateway answers
--           it as bad_request, after asking the other shards of a sharded board)
--   score/rank: after the operation (reverse), "" / 0 otherwise
--   detail: remove: 1 when the member was on the board; reset: 1 when the
--   board had keys to reset, 0 when it had none (nothing written); else a message

local z, seqkey, logkey, chan, blocked = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local action, member = ARGV[1], ARGV[2]
local at = tonumber(ARGV[4])
local desc = ARGV[5] == 'desc'
local arrival = ARGV[6] == 'arrival'
local slot, scale = tonumber(ARGV[6]) or 0, tonumber(ARGV[7])
local akey = KEYS[9]
local pmin, pmax = tonumber(ARGV[8]), tonumber(ARGV[9])
local logcap, ttl = tonumber(ARGV[10]), tonumber(ARGV[11])
local pubcmd = ARGV[12] == 'SPUBLISH' and 'SPUBLISH' or 'PUBLISH'
local ekey = KEYS[8]
local epoch_arg = ARGV[13] or ''
if #epoch_arg > 32 or not string.match(epoch_arg, '^[%w]*$') then epoch_arg = '' end

local function num(x) return string.format('%.17g', x) end
local function jnum(x) if x == nil then return 'null' end return num(x) end
local function rank_of(m)
  local r
  if desc then r = redis.call('ZREVRANK', z, m) else r = redis.call('ZRANK', z, m) end
  if r then return r + 1 end
  return 0
end
local function seq_now() return tonumber(redis.call('GET', seqkey) or '0') end

-- arrival: member leaves points p; the last holder takes the value's counters
local function arr_leave(p)
  local k = num(p)
  if redis.call('HINCRBY', akey, 'h:' .. k, -1) <= 0 then redis.call('HDEL', akey, 'a:' .. k, 'h:' .. k) end
end

-- The epoch that holds now, or '' (the rule of lua/write.lua, "Epochs").
local function epoch_now()
  if not ekey then return '' end
  local e = redis.call('HMGET', ekey, 'id', 'empty')
  if not e[1] or redis.call('EXISTS', seqkey) == 0 then return '' end
  if e[2] ~= '1' and redis.call('EXISTS', z) == 0 then return '' end
  return e[1]
end

-- Starts a new history: a new epoch id (empty: the board has no members).
local function new_epoch(empty)
  local id = epoch_arg
  if id == '' then
    local t = redis.call('TIME')
    id = string.sub(redis.sha1hex(t[1] .. '.' .. t[2] .. z .. seq_now()), 1, 16)
  end
  redis.call('DEL', ekey) -- two fields: DEL frees it at once
  if empty then redis.call('HSET', ekey, 'id', id, 'empty', '1') else redis.call('HSET', ekey, 'id', id) end
  return id
end

-- Appends the change to the log and publishes it (the write script's event
-- shape; "c": null means the member left the board).
local function record(op, m, newc, oldc, rank, oldrank, epoch)
  if not epoch and ekey and epoch_now() == '' then
    -- no history holds (seq gone, say): this change starts one
    if redis.call('EXISTS', seqkey) == 0 then redis.call('UNLINK', logkey) end
    epoch = new_epoch(redis.call('EXISTS', z) == 0)
  end
  local seq = redis.call('INCR', seqkey)
  local jr = 'null'
  if rank > 0 then jr = tostring(rank) end
  local jor = 'null'
  if oldrank > 0 then jor = tostring(oldrank) end
  local event = '{"seq":' .. seq .. ',"op":"' .. op .. '"'
  if m then event = event .. ',"member":"' .. m .. '"' end
  event = event .. ',"c":' .. jnum(newc) .. ',"old_c":' .. jnum(oldc) ..
    ',"rank":' .. jr .. ',"old_rank":' .. jor .. ',"at":' .. num(at)
  if epoch then event = event .. ',"epoch":"' .. epoch .. '"' end
  event = event .. '}'
  redis.call('RPUSH', logkey, event)
  redis.call('LTRIM', logkey, -logcap, -1)
  if ttl > 0 then
    redis.call('PEXPIRE', seqkey, ttl)
    redis.call('PEXPIRE', logkey, ttl)
    if redis.call('EXISTS', z) == 1 then redis.call('PEXPIRE', z, ttl) end
    if ekey then redis.call('PEXPIRE', ekey, ttl) end
    if akey and redis.call('EXISTS', akey) == 1 then redis.call('PEXPIRE', akey, ttl) end
  end
  redis.call(pubcmd, chan, event)
  return seq
end

if action == 'remove' then
  local oldc = redis.call('ZSCORE', z, member)
  local oldrank = 0
  if oldc then oldrank = rank_of(member); oldc = tonumber(oldc) else oldc = nil end
  if ARGV[3] == '1' then
    redis.call('SADD', blocked, member)
    if ttl > 0 then redis.call('PEXPIRE', blocked, ttl) end
  end
  if not oldc then return { 'ok', seq_now(), member, '', 0, 0 } end
  redis.call('ZREM', z, member)
  if arrival then arr_leave(math.floor(oldc / scale)) end
  redis.call('DEL', KEYS[6]) -- the member's fields: one small hash
  if ekey and redis.call('EXISTS', z) == 0 then redis.call('HSET', ekey, 'empty', '1') end
  return { 'ok', record('remove', member, nil, oldc, 0, oldrank), member, '', 0, 1 }

elseif action == 'unblock' then
  redis.call('SREM', blocked, member)
  if ttl > 0 and redis.call('EXISTS', blocked) == 1 then redis.call('PEXPIRE', blocked, ttl) end
  return { 'ok', seq_now(), member, '', 0, 0 }

elseif action == 'reverse' then
  local marker = redis.call('GET', KEYS[6])
  if not marker then
    return { 'unknown_req', 0, '', '', 0, 'no write with that req on this board within its idempotency window' }
  end
  -- the write script stores "member\nold points\nnew points" (old "" when
  -- new), a queued write's with "\n#ENTRY-ID" after it, and enqueue.lua
  -- "#ENTRY-ID\nmember" until the entry is applied (lua/write.lua,
  -- "Idempotency records")
  if string.byte(marker, 1) == 35 then
    return { 'bad_request', 0, '', '', 0, 'that write is queued and not applied yet: nothing to reverse' }
  end
  local m, oldp, newp = string.match(marker, '^([^\n]*)\n([^\n]*)\n([^\n#]*)$')
  if not m then m, oldp, newp = string.match(marker, '^([^\n]*)\n([^\n]*)\n([^\n#]*)\n#') end
  if not m then return { 'bad_request', 0, '', '', 0, 'that write changed nothing to reverse' } end
  if redis.call('EXISTS', KEYS[7]) == 1 then
    local c = redis.call('ZSCORE', z, m)
    local s = ''
    if c then s = num(math.floor(tonumber(c) / scale)) end
    return { 'duplicate', seq_now(), m, s, rank_of(m), 'already reversed' }
  end
  local delta = tonumber(newp) - (tonumber(oldp) or 0)
  local oldc = redis.call('ZSCORE', z, m)
  if not oldc then return { 'bad_request', 0, m, '', 0, 'the member is no longer on the board' } end
  oldc = tonumber(oldc)
  local p = math.floor(oldc / scale) - delta
  if p < pmin or p > pmax then
    return { 'out_of_range', 0, m, '', 0, 'the reversal would leave the range ' .. num(pmin) .. '..' .. num(pmax) }
  end
  local oldrank = rank_of(m)
  local newc = p * scale + slot
  local curp = math.floor(oldc / scale)
  local idx = nil
  if arrival then
    if p == curp then
      newc = oldc -- the member holds these points already: it keeps its arrival
    else
      idx = tonumber(redis.call('HGET', akey, 'a:' .. num(p)) or '0')
      if idx >= scale then
        return { 'out_of_range', 0, m, '', 0, 'score ' .. num(p) .. ' has had ' .. num(scale) ..
                 ' arrivals while held, all this board\'s tie bits (tiebreak_bits) can order' }
      end
      if desc then newc = p * scale + (scale - 1 - idx) else newc = p * scale + idx end
    end
  end
  if idx ~= nil then
    redis.call('HSET', akey, 'a:' .. num(p), idx + 1)
    redis.call('HINCRBY', akey, 'h:' .. num(p), 1)
    arr_leave(curp)
  end
  redis.call('ZADD', z, num(newc), m)
  redis.call('SET', KEYS[7], '1', 'PX', math.max(redis.call('PTTL', KEYS[6]), 1))
  local rank = rank_of(m)
  return { 'ok', record('reverse', m, newc, oldc, rank, oldrank), m, num(p), rank, 1 }

elseif action == 'reset' then
  -- A board with none of its keys (never written, or its period expired) is
  -- already empty: resetting it must not bring a seq, a log and a reset event
  -- into being out of nothing. It answers ok with seq 0, as it stands.
  if redis.call('EXISTS', z, seqkey, logkey) == 0 then
    return { 'ok', 0, '', '', 0, 0 }
  end
  -- a reset ends a freeze: the audience sees the empty board with everyone
  -- (the unfreeze goes out before the reset's event, as freeze.lua sends it)
  if KEYS[10] and redis.call('HGET', KEYS[10], 'on') == '1' then
    local v = redis.call('HINCRBY', KEYS[10], 'v', 1)
    local from = tonumber(redis.call('HGET', KEYS[10], 'shown') or '0')
    redis.call('HSET', KEYS[10], 'on', '0', 'shown', seq_now())
    redis.call(pubcmd, chan, '{"ctl":"unfreeze","v":' .. v .. ',"from":' .. from .. ',"shown":' .. seq_now() .. '}')
  end
  if KEYS[11] then redis.call('UNLINK', KEYS[11]) end
  -- UNLINK: a board of a million members is freed off Redis' main thread
  redis.call('UNLINK', z)
  redis.call('UNLINK', logkey)
  if akey then redis.call('UNLINK', akey) end -- the arrival counters go with the set
  local epoch = nil
  if ekey then epoch = new_epoch(true) end
  return { 'ok', record('reset', nil, nil, nil, 0, 0, epoch), '', '', 0, 1 }
end
return { 'bad_request', 0, '', '', 0, 'unknown admin action' }
