-- write.lua - rankcast's one atomic score write.
--
-- Applies incr | set | best | submit to one member of one board (one period),
-- refuses a repeated request id, keeps the capped change log, bumps the board's
-- version, publishes the change and answers score + rank from the same
-- snapshot. Every key is in KEYS, every value in ARGV (Redis Cluster safe: all
-- keys share the board's hash tag {B|P}). Nothing is written unless every check
-- passed first.
--
-- KEYS[1] rc:{B|P}:z        sorted set (composite scores, see core/rc_layout.h)
-- KEYS[2] rc:{B|P}:seq      board version
-- KEYS[3] rc:{B|P}:log      capped change log (JSON events, oldest first)
-- KEYS[4] rc:{B|P}:req:ID   idempotency record (unused when ARGV[10] is ""; see
--                          "Idempotency records" below)
-- KEYS[5] rc:{B|P}:f:MEMBER unused since fields are read back from the
--         composite (kept so the call's layout does not change; older
--         versions stored a multi-field member's raw values there)
-- KEYS[6] rc:{B|P}:ch       channel for change events
-- KEYS[7] rc:{B|}:b:INDEX   hot boards only: the bucket of the write's time
-- KEYS[8] rc:{B|P}:blocked  members an admin blocked from writing to the board
--                           in this period (see lua/admin.lua, "Blocklists")
-- KEYS[9] rc:{B|P}:epoch    the board's epoch (see "Epochs" below)
-- KEYS[10] rc:{B|P}:arr     tiebreak = arrival: the arrival counters (see
--                           "Arrival order" below; passed on every board)
-- Team boards (docs/teams.md), passed only when the board has `teams = T`:
-- KEYS[11] rc:{B|P}:tm    membership: member -> team id, "#"..team -> the
--                         team's member count ('#' starts no member), and
--                         "#" alone -> the membership's version (op team);
--                         a periodic board keeps one per period ("Teams")
-- KEYS[12..16] T's z, seq, log, ch and epoch: rc:{B|P}{T}:z ... in B's tag
-- KEYS[17] rc:{B|P}:tml   the membership's log (op team; "Teams" below)
--
-- ARGV[1]  op: incr | set | best | submit, or team (ARGV[3]: the new team
--          id, "" to leave; see "Teams" below)
-- ARGV[2]  member
-- ARGV[3]  incr: delta; set/best: value; submit: ""
-- ARGV[4]  at: the write's time, ms since the epoch (from the gateway)
-- ARGV[5]  tie-break slot, already ordered for this board (0 when none), or
--          "arrival": the script takes the slot from the arrival counters
-- ARGV[6]  2^tie-break bits
-- ARGV[7]  order: desc | asc
-- ARGV[8]  points_min    ARGV[9] points_max   (single-field boards)
-- ARGV[10] req id or ""  ARGV[11] idempotency window, seconds
-- ARGV[12] log cap       ARGV[13] submit mode: replace | best
-- ARGV[14] periodic boards: ms until the keys expire (the end of the period
--          `keep` periods later), else 0
-- ARGV[15] number of fields F; then F groups of 4: name, bits, asc (0|1), value or ""
-- ARGV[16 + 4F] hot boards (decay = buckets): the bucket's lifetime in ms
--          (window + bucket_span), else 0
-- ARGV[17 + 4F] PUBLISH on one Redis, SPUBLISH on a cluster (sharded
--          pub/sub: the channel KEYS[6] hashes to the board's slot)
-- ARGV[18 + 4F] "1" when KEYS[8] must be seeded before the first write of
--          the period (periodic boards), else "0"
-- ARGV[19 + 4F] a fresh random epoch id from the gateway, used only when
--          this write starts the board's history (see "Epochs"); "" lets the
--          script make one from the server's TIME
-- ARGV[20 + 4F] "1": no new record: the writer is at its cap
--          (idempotency_max_per_key), so the write may only settle a req
--          that has its record already (see "Idempotency records"); else "0"
-- ARGV[21 + 4F ...] the seed: when present, the sentinel "" followed by the
--          members of the board's blocklist for every period (rc:{B|}:blocked,
--          read by the gateway)
--
-- Epochs: KEYS[9] is a hash { id = EPOCH, empty = "1" | absent }. The epoch
-- names one unbroken history of the board: seq, log and set together. It
-- holds only while the history's keys do: the seq key exists, and the set
-- exists or a rankcast script emptied it on purpose (admin reset or the
-- removal of the last member set "empty"). A set deleted from outside
-- (DEL from redis-cli), a seq gone, a flushed or lost Redis: the epoch no
-- longer holds, and the next write that changes the board starts a new
-- history with the id ARGV[19 + 4F]: the old log is dropped (its events
-- belong to the old history) and the change event carries "epoch". Reads
-- (lua/read.lua) apply the same rule and answer "" while no epoch holds.
--
-- Blocklists: a board without periods has one blocklist, KEYS[8]. A
-- periodic board keeps one per period in the period's tag (a script touches
-- one slot only), plus the board's list rc:{B|}:blocked that admins change
-- and new periods copy. A period's list is "seeded" once it holds the
-- sentinel member "" (no member id is empty). Until then the script answers
-- { "unseeded" } and writes nothing; the gateway reads rc:{B|}:blocked and
-- sends the write again with its members (ARGV[21 + 4F ...]), which the
-- script copies in with the sentinel before it checks the member.
--
-- Reply: { status, score, rank, seq, composite, old_rank, member, changed }
--   status   "ok" | "duplicate" | "out_of_range" | "bad_request" | "forbidden"
--   score    points as a string ("" on multi-field boards and when absent)
--   rank     1-based rank after the write (0 when absent)
--   seq      board version after the write
--   composite the stored score as a string ("" when absent)
--   old_rank rank before the write (0 when absent)
--   member   the member the answer is about (a duplicate answers for the
--            member of the original write)
--   changed  1 when the board changed (seq grew, event published), else 0
-- On out_of_range / bad_request / forbidden (a blocked member): { status,
-- message } and nothing is written.
-- Reply { "no_record" }: no new record (ARGV[20 + 4F] "1") and the req has
-- none: nothing was written (the gateway answers rate_limited).
--
-- Idempotency records: one string per write with a req, KEYS[4]
-- (rc:{B|P}:req:REQ), expiring idempotency_window (ARGV[11]) after the write.
-- It holds "member" or, for a single-field write that changed the board,
-- "member\nold points\nnew points" (old "" when the member was new), so an
-- admin can reverse the write by its req (lua/admin.lua). A queued board's
-- write (docs/queued.md) shares this one record with its enqueue: enqueue.lua
-- makes it in the queued state "#ENTRY-ID\nmember" ('#' starts no member);
-- the write that applies the entry finds it, goes on (it is not a retry) and
-- replaces it by the applied record with "\n#ENTRY-ID" appended (the enqueue
-- of a retried req answers that entry), renewing the window so that a
-- redelivered entry is answered duplicate. Any other record answers
-- duplicate. Measured cost: docs/security.md, "Idempotency records".
-- No new record (ARGV[20 + 4F] "1", a writer at its cap): a req with a
-- record is answered exactly as above (a retry still learns that its write
-- happened, and an entry in the queued state is still applied: its key
-- exists already); a req without one answers { "no_record" } before any
-- other check, and nothing is written.
--
-- Event (published on KEYS[6] and appended to KEYS[3]), a JSON object:
--   {"seq":N,"member":M,"op":OP,"score":P|null,"old_score":P|null,
--    "c":COMPOSITE,"old_c":COMPOSITE|null,"rank":R,"old_rank":R|null,"at":MS}
--   plus ,"epoch":E when this write started a new history (see "Epochs")
-- Reply { "unseeded" }: the period's blocklist has no seed yet (see
-- "Blocklists" above); nothing was written.
--
-- Hot boards (decay = buckets, only incr): the write adds the delta to the
-- member in the bucket KEYS[7] and renews the bucket's TTL (relative PEXPIRE,
-- ARGV[16 + 4F]); idempotency by req as above. It does not touch KEYS[1..3],
-- bump seq, log or publish: the read board KEYS[1] changes only when the
-- decay job rebuilds it (lua/rebuild.lua), and viewers learn of that through
-- keyspace notifications. The reply has the usual shape, about the read
-- board: score and composite are the member's weighted score there and rank
-- its rank there; a member the read board does not hold yet (before the
-- first rebuild that counts it) answers its points in the current bucket and
-- rank 0. seq is the read board's version; changed is always 0.
--
-- Arrival order (ARGV[5] = "arrival", 2^T in ARGV[6]): the tie bits are the
-- member's arrival index at its points value, not a time. KEYS[10] is a hash
-- with two fields per points value P that someone holds:
--   a:P  the next arrival index at P (how many arrived at P so far)
--   h:P  how many members hold P now
-- A write that moves a member to new points P takes index i = a:P (0 when
-- absent), stores slot 2^T - 1 - i on a desc board (i on asc), so an earlier
-- arrival ranks first, then sets a:P = i + 1, adds 1 to h:P and takes 1 from
-- h of the member's old points; when h reaches 0 both fields of that value
-- go (nobody holds it, so nobody needs its order). When i = 2^T (the value
-- had 2^T arrivals while held) the write is out_of_range and writes nothing:
-- never a wrong order. A write that leaves the points unchanged (set to the
-- same value, best not better, incr 0) keeps its composite and its arrival.
-- When the set does not exist (period expired, emptied, deleted from
-- outside) the counters count nobody: the first write drops them. Periodic
-- boards renew KEYS[10]'s TTL with the others. Only single-field boards.

-- Teams (KEYS[11..16] given): a team's points on T are the sum of the
-- points of its members on B. A write that changes a member's points adds
-- the difference to its team's sum in this same call (out_of_range, and
-- nothing written, when the sum would leave the board's range); the team's
-- composite takes this write's tie-break slot (earliest to reach a sum
-- wins), and T gets its own change event on its own channel (same shape,
-- member = the team id, op = the write's op). A team is on T from the first
-- time one of its members has points until its last member leaves.
-- op team publishes {"team_of": member, "team": id or null, "v": version}
-- on B's channel (KEYS[6]) when the membership changed, so B's rows show the
-- new team. The version ("#" in KEYS[11], +1 per change) lets the gateway
-- tell a late message from a new one: after a failover an old primary can
-- still run a call it held and publish its message through the shard's new
-- primary after newer ones (docs/teams.md); the gateway applies the next
-- version only and reads the membership again on any other.
-- op team moves the member: its points leave the old team and join the new
-- one, one event per team changed (two consecutive seqs of T for a move,
-- the first marked "move":1; a team whose last member left goes with
-- "c": null). A member without
-- points changes only the membership. Every membership change is logged
-- on KEYS[17] (docs/history.md, "Rosters at a moment"): a header
-- {"from":S,"from_at":MS} (entries are whole for every change after B's
-- seq S and time MS: 0 0 when the log began with no membership at all),
-- then {"bseq":B's seq,"at":MS,"member":M,"old":T|null,"new":T|null} per
-- change, capped at the log cap (the header follows the oldest kept).
-- A periodic board keeps one membership per period, in the period's tag
-- (KEYS[11], KEYS[17]), so a write and a move touch one slot. A period's
-- membership starts as a copy of the latest earlier period's, made by the
-- gateway (lua/teams.lua, "seed") before the period's first write or team
-- op: until KEYS[11] exists (a seeded one always holds "#") a write or
-- team op of the period (ARGV[18 + 4F] "1") answers { "team_unseeded" }
-- and writes nothing; the gateway seeds it and sends the call again.
-- T's keys expire with the period's (ARGV[14]); the membership does not
-- (the gateway expires a period's once a later period was seeded from it).
-- Reply to op team:
--   { "teamed", team or "", seq of B, seq of T, changed }
-- Replies of the writes get three more items after `changed`: team id
-- ("" when none), team score (string, "" when none), team rank (0).

-- Boards without a tie-break (2^0 = 1 in ARGV[6]) store the points as the
-- score, unpacked: a decay = scale board holds fractional scores once scaled,
-- and incr adds to them as they are.

local zkey, seqkey, logkey, reqkey, fkey, chan =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local op, member, arg = ARGV[1], ARGV[2], ARGV[3]
local at = tonumber(ARGV[4])
local arrival = ARGV[5] == 'arrival'
local slot = tonumber(ARGV[5]) or 0
local akey = KEYS[10]
local scale = tonumber(ARGV[6])
local desc = ARGV[7] == 'desc'
local pmin, pmax = tonumber(ARGV[8]), tonumber(ARGV[9])
local req, window = ARGV[10], tonumber(ARGV[11])
local logcap = tonumber(ARGV[12])
local submit_best = ARGV[13] == 'best'
local ttl = tonumber(ARGV[14])
local nfields = tonumber(ARGV[15])
local bucket_ttl = tonumber(ARGV[16 + 4 * nfields] or '0') or 0
local hot, bkey = bucket_ttl > 0, KEYS[7]
local pubcmd = ARGV[17 + 4 * nfields] == 'SPUBLISH' and 'SPUBLISH' or 'PUBLISH'
local seed_required = ARGV[18 + 4 * nfields] == '1'
local epoch_arg = ARGV[19 + 4 * nfields] or ''
if #epoch_arg > 32 or not string.match(epoch_arg, '^[%w]*$') then epoch_arg = '' end
local no_new_record = ARGV[20 + 4 * nfields] == '1'
local seed_at = 21 + 4 * nfields
local ekey = KEYS[9]

local function num(x)
  -- %.17g prints every integer below 2^53 exactly, without an exponent
  return string.format('%.17g', x)
end

local function rank_of(m)
  local r
  if desc then r = redis.call('ZREVRANK', zkey, m) else r = redis.call('ZRANK', zkey, m) end
  if r then return r + 1 end
  return 0
end

local function seq_now()
  return tonumber(redis.call('GET', seqkey) or '0')
end

-- points of a single-field composite; unpacked when there is no tie-break
local function points_of(c)
  if scale == 1 then return c end
  return math.floor(c / scale)
end

local with_team -- defined with the team helpers below (see "Teams")

local function answer(status, m, changed)
  local c = redis.call('ZSCORE', zkey, m)
  if not c and hot then c = redis.call('ZSCORE', bkey, m) end
  local score = ''
  if c and nfields == 0 then score = num(points_of(tonumber(c))) end
  return with_team({ status, score, rank_of(m), seq_now(), c or '', 0, m, changed }, m)
end

-- The epoch that holds for the board's history now, or '' (see "Epochs"),
-- and whether it is marked "empty".
local function epoch_now()
  if not ekey then return '', false end
  local e = redis.call('HMGET', ekey, 'id', 'empty')
  if not e[1] or redis.call('EXISTS', seqkey) == 0 then return '', false end
  if e[2] ~= '1' and redis.call('EXISTS', zkey) == 0 then return '', false end
  return e[1], e[2] == '1'
end

-- Team board T (see "Teams"): its keys, and the changes this call makes to it
local teamed = KEYS[16] ~= nil
local tmkey, tz, tseqkey, tlogkey, tchan, tekey = KEYS[11], KEYS[12], KEYS[13], KEYS[14], KEYS[15], KEYS[16]

local function team_rank(t)
  local r
  if desc then r = redis.call('ZREVRANK', tz, t) else r = redis.call('ZRANK', tz, t) end
  if r then return r + 1 end
  return 0
end

-- the team part of a reply: { team, team score, team rank }
local function team_reply(m)
  if not teamed then return nil end
  local t = redis.call('HGET', tmkey, m)
  if not t then return { '', '', 0 } end
  local c = redis.call('ZSCORE', tz, t)
  if not c then return { t, '', 0 } end
  return { t, num(points_of(tonumber(c))), team_rank(t) }
end

with_team = function(reply, m)
  local tr = team_reply(m)
  if tr then reply[9], reply[10], reply[11] = tr[1], tr[2], tr[3] end
  return reply
end

-- T's epoch, by the rule of "Epochs": '' when no history holds
local function team_epoch_now()
  local e = redis.call('HMGET', tekey, 'id', 'empty')
  if not e[1] or redis.call('EXISTS', tseqkey) == 0 then return '', false end
  if e[2] ~= '1' and redis.call('EXISTS', tz) == 0 then return '', false end
  return e[1], e[2] == '1'
end

-- team t's sum after adding d, or nil when t is not on T and stays off
local function team_sum_after(t, d)
  local c = redis.call('ZSCORE', tz, t)
  if c then return points_of(tonumber(c)) + d, tonumber(c) end
  return d, nil
end

-- Records a change event of T: log and channel.
local function team_emit(event)
  redis.call('RPUSH', tlogkey, event)
  redis.call('LTRIM', tlogkey, -logcap, -1)
  if ttl > 0 then
    -- T's keys go with the period's (relative, as B's below)
    redis.call('PEXPIRE', tz, ttl)
    redis.call('PEXPIRE', tseqkey, ttl)
    redis.call('PEXPIRE', tlogkey, ttl)
    redis.call('PEXPIRE', tekey, ttl)
  end
  redis.call(pubcmd, tchan, event)
end

-- Puts team t at sum newp (or takes it off T when newp is nil) and
-- records the change on T: seq, and log and channel unless held (then the
-- event is returned for the caller to emit, in seq order). Returns the
-- event held, or nil.
local function team_set(t, newp, tslot, top, hold)
  local oldc = redis.call('ZSCORE', tz, t)
  if oldc then oldc = tonumber(oldc) else oldc = nil end -- Redis nil reads as false
  local oldp = nil
  if oldc then oldp = points_of(oldc) end
  local newc = nil
  if newp ~= nil then
    if oldp ~= nil and newp == oldp then return end -- same sum: keeps its place
    newc = newp * scale + tslot
  elseif oldc == nil then
    return
  end
  local fresh = nil
  local held, empty = team_epoch_now()
  if held == '' then
    fresh = epoch_arg
    if fresh == '' then
      local tm = redis.call('TIME')
      fresh = string.sub(redis.sha1hex(tm[1] .. '.' .. tm[2] .. tz), 1, 16)
    end
    if redis.call('EXISTS', tz) == 0 or redis.call('EXISTS', tseqkey) == 0 then redis.call('UNLINK', tlogkey) end
    redis.call('DEL', tekey)
    redis.call('HSET', tekey, 'id', fresh)
  elseif empty then
    redis.call('HDEL', tekey, 'empty')
  end
  local oldrank = 0
  if oldc then oldrank = team_rank(t) end
  local rank = 0
  if newc then
    redis.call('ZADD', tz, num(newc), t)
    rank = team_rank(t)
  else
    redis.call('ZREM', tz, t)
    if redis.call('EXISTS', tz) == 0 then redis.call('HSET', tekey, 'empty', '1') end
  end
  local tseq = redis.call('INCR', tseqkey)
  local function jn(x) if x == nil then return 'null' end return num(x) end
  local function jr(r) if r == 0 then return 'null' end return tostring(r) end
  local event = '{"seq":' .. tseq .. ',"member":"' .. t .. '","op":"' .. top ..
    '","score":' .. jn(newp) .. ',"old_score":' .. jn(oldp) ..
    ',"c":' .. jn(newc) .. ',"old_c":' .. jn(oldc) ..
    ',"rank":' .. jr(rank) .. ',"old_rank":' .. jr(oldrank) .. ',"at":' .. num(at)
  if fresh then event = event .. ',"epoch":"' .. fresh .. '"' end
  event = event .. '}'
  if hold then return event end
  team_emit(event)
end

local function range_error(p)
  return { 'out_of_range', 'team sum ' .. num(p) .. ' would be outside this board\'s range ' ..
           num(pmin) .. '..' .. num(pmax) }
end

-- a period whose membership is not seeded yet: nothing is written (see "Teams")
if teamed and seed_required and redis.call('EXISTS', tmkey) == 0 then return { 'team_unseeded' } end

-- op team: moves member to team ARGV[3] ("" leaves); see "Teams"
if op == 'team' then
  if not teamed then return { 'bad_request', 'this board has no team board (teams)' } end
  local new = arg
  local old = redis.call('HGET', tmkey, member) or ''
  local function reply(changed)
    local ts = tonumber(redis.call('GET', tseqkey) or '0')
    return { 'teamed', new, seq_now(), ts, changed }
  end
  if old == new then return reply(0) end
  local c = redis.call('ZSCORE', zkey, member)
  local pts = nil
  if c then pts = points_of(tonumber(c)) end
  local newsum = nil
  if new ~= '' and pts ~= nil then
    newsum = team_sum_after(new, pts)
    if newsum < pmin or newsum > pmax then return range_error(newsum) end
  end
  local oldsum = nil
  local old_left = false
  if old ~= '' then
    old_left = tonumber(redis.call('HGET', tmkey, '#' .. old) or '1') <= 1
    if pts ~= nil and not old_left and redis.call('ZSCORE', tz, old) then
      oldsum = team_sum_after(old, -pts)
      if oldsum < pmin or oldsum > pmax then return range_error(oldsum) end
    end
  end
  -- every check passed: membership, then the teams, old first
  local had_none = redis.call('EXISTS', tmkey) == 0
  if old ~= '' then
    if old_left then redis.call('HDEL', tmkey, '#' .. old) else redis.call('HINCRBY', tmkey, '#' .. old, -1) end
  end
  if new ~= '' then
    redis.call('HSET', tmkey, member, new)
    redis.call('HINCRBY', tmkey, '#' .. new, 1)
  else
    redis.call('HDEL', tmkey, member)
  end
  local tver = redis.call('HINCRBY', tmkey, '#', 1)
  local tml = KEYS[17]
  if tml then
    local function jname(x) if x == '' then return 'null' end return '"' .. x .. '"' end
    if redis.call('EXISTS', tml) == 0 then
      local from, from_at = seq_now(), at
      if had_none then from, from_at = 0, 0 end
      redis.call('RPUSH', tml, '{"from":' .. from .. ',"from_at":' .. num(from_at) .. '}')
    end
    local n = redis.call('RPUSH', tml, '{"bseq":' .. seq_now() .. ',"at":' .. num(at) .. ',"member":"' ..
      member .. '","old":' .. jname(old) .. ',"new":' .. jname(new) .. '}')
    if n > logcap + 1 then
      -- the newest logcap + 1 entries kept; the oldest of them gives way to
      -- the header, which then says from its seq and time on
      redis.call('LTRIM', tml, -(logcap + 1), -1)
      local fs, fa = string.match(redis.call('LINDEX', tml, 0), '^{"bseq":(%d+),"at":([^,]+)')
      redis.call('LSET', tml, 0, '{"from":' .. fs .. ',"from_at":' .. fa .. '}')
    end
  end
  -- a move changes two teams: its first event says "move":1, so a read
  -- at a past moment never shows one half (docs/history.md)
  local evs = {}
  if old ~= '' then
    if old_left then evs[#evs + 1] = team_set(old, nil, slot, 'team', true)
    elseif oldsum ~= nil then evs[#evs + 1] = team_set(old, oldsum, slot, 'team', true) end
  end
  if newsum ~= nil then evs[#evs + 1] = team_set(new, newsum, slot, 'team', true) end
  if #evs == 2 then evs[1] = string.sub(evs[1], 1, -2) .. ',"move":1}' end
  for i = 1, #evs do team_emit(evs[i]) end
  -- the source board's viewers show each row's team: tell them (no seq: no
  -- member's points changed; core/rc_event.h, rc_event_team_parse)
  local tj = 'null'
  if new ~= '' then tj = '"' .. new .. '"' end
  redis.call(pubcmd, chan, '{"team_of":"' .. member .. '","team":' .. tj .. ',"v":' .. tver .. '}')
  return reply(1)
end

-- 1. idempotency: a request id the board already accepted changes nothing;
-- a record in the queued state ("#ENTRY\nMEMBER", lua/enqueue.lua) is the
-- consumer applying that entry now: it goes on, and the record becomes the
-- applied one (see "Idempotency records")
local queued_entry = nil
if req ~= '' then
  local prior = redis.call('GET', reqkey)
  if prior and string.byte(prior, 1) == 35 then -- '#': no member starts with it
    queued_entry = string.match(prior, '^#([^\n]*)')
  elseif prior then
    return answer('duplicate', string.match(prior, '^[^\n]*'), 0)
  elseif no_new_record then
    return { 'no_record' } -- a new req from a writer at its cap: nothing written
  end
end

-- 2. a member an admin blocked writes nothing; a period's blocklist is
-- seeded from the board's on the period's first write
if seed_required and redis.call('SISMEMBER', KEYS[8], '') == 0 then
  if ARGV[seed_at] == nil then return { 'unseeded' } end
  local i = seed_at
  while i <= #ARGV do -- in slices: unpack has a stack limit
    local j = math.min(i + 999, #ARGV)
    redis.call('SADD', KEYS[8], unpack(ARGV, i, j))
    i = j + 1
  end
  if ttl > 0 then redis.call('PEXPIRE', KEYS[8], ttl) end
end
if KEYS[8] and redis.call('SISMEMBER', KEYS[8], member) == 1 then
  return { 'forbidden', 'member ' .. member .. ' is blocked on this board' }
end

-- hot board: the delta goes to the current bucket, nothing else changes
if hot then
  if op ~= 'incr' then return { 'bad_request', 'only incr applies to a hot board' } end
  local v = tonumber(arg)
  if v == nil then return { 'bad_request', 'value is not a number' } end
  local newb = tonumber(redis.call('ZSCORE', bkey, member) or '0') + v
  if newb < pmin or newb > pmax then
    return { 'out_of_range', 'score ' .. num(newb) .. ' is outside this board\'s range ' ..
             num(pmin) .. '..' .. num(pmax) }
  end
  if req ~= '' then redis.call('SET', reqkey, member, 'NX', 'EX', window) end
  if v ~= 0 then
    redis.call('ZADD', bkey, num(newb), member)
    redis.call('PEXPIRE', bkey, bucket_ttl)
  end
  return answer('ok', member, 0)
end

-- 2. compute the new composite from the old one; validate before any write
-- a missing member reads as false (Redis nil); keep nil for "absent"
local oldc = redis.call('ZSCORE', zkey, member)
if oldc then oldc = tonumber(oldc) else oldc = nil end
local newc, newp, oldp
local arr_idx, arr_fresh = nil, false -- arrival: the index taken at newp

if nfields == 0 then
  local v = tonumber(arg)
  if v == nil then return { 'bad_request', 'value is not a number' } end
  if oldc then oldp = points_of(oldc) end
  if op == 'incr' then
    newp = (oldp or 0) + v
  elseif op == 'set' then
    newp = v
  elseif op == 'best' then
    if oldp == nil or (desc and v > oldp) or (not desc and v < oldp) then newp = v else newp = oldp end
  else
    return { 'bad_request', 'op ' .. op .. ' does not apply to a single-field board' }
  end
  if newp < pmin or newp > pmax then
    return { 'out_of_range', 'score ' .. num(newp) .. ' is outside this board\'s range ' ..
             num(pmin) .. '..' .. num(pmax) }
  end
  if oldp ~= nil and newp == oldp then
    newc = oldc
  elseif arrival then
    -- the counters of a set that does not exist count nobody (see "Arrival order")
    arr_fresh = redis.call('EXISTS', zkey) == 0
    local idx = 0
    if not arr_fresh then idx = tonumber(redis.call('HGET', akey, 'a:' .. num(newp)) or '0') end
    if idx >= scale then
      return { 'out_of_range', 'score ' .. num(newp) .. ' has had ' .. num(scale) ..
               ' arrivals while held, all this board\'s tie bits (tiebreak_bits) can order: ' ..
               'no later arrival at it can be ranked exactly' }
    end
    arr_idx = idx
    if desc then newc = newp * scale + (scale - 1 - idx) else newc = newp * scale + idx end
  else
    newc = newp * scale + slot
  end
else
  if op ~= 'submit' then return { 'bad_request', 'op ' .. op .. ' needs a single-field board' } end
  local names = {}
  for i = 1, nfields do names[i] = ARGV[15 + (i - 1) * 4 + 1] end
  -- a member's fields are read back from its composite, which holds each of
  -- them exactly (core/rc_layout.h: bits per field, asc fields stored as
  -- max - v, below the tie-break bits): no per-member hash to keep, expire
  -- or free (a member off the set has none: all zero)
  local stored = {}
  if oldc then
    local part = math.floor(oldc / scale)
    for i = nfields, 1, -1 do
      local base = 15 + (i - 1) * 4
      local unit = 2 ^ tonumber(ARGV[base + 2])
      local enc = part % unit
      part = math.floor(part / unit)
      if ARGV[base + 3] == '1' then enc = unit - 1 - enc end
      stored[i] = enc
    end
  end
  local acc = 0
  local values = {}
  for i = 1, nfields do
    local base = 15 + (i - 1) * 4
    local bits, asc, given = tonumber(ARGV[base + 2]), ARGV[base + 3] == '1', ARGV[base + 4]
    local max = 2 ^ bits - 1
    local old = stored[i] or 0
    local v = old
    if given ~= '' then v = tonumber(given) end
    if v == nil or v < 0 or v > max or v ~= math.floor(v) then
      return { 'out_of_range', 'field ' .. names[i] .. ' must be 0..' .. num(max) .. ', got ' .. tostring(given) }
    end
    values[i] = v
    local enc = v
    if asc then enc = max - v end
    acc = acc * 2 ^ bits + enc
  end
  local keep = false
  if oldc then
    local oldpart = math.floor(oldc / scale)
    if acc == oldpart then keep = true end
    if submit_best and acc < oldpart then keep = true end
  end
  if keep then
    newc = oldc
  else
    newc = acc * scale + slot
  end
end

-- the member's team (see "Teams"): its new sum must fit the range too
local my_team, team_newsum = nil, nil
if teamed and nfields == 0 then
  my_team = redis.call('HGET', tmkey, member)
  if my_team and not (oldc ~= nil and newc == oldc) then
    team_newsum = team_sum_after(my_team, newp - (oldp or 0))
    if team_newsum < pmin or team_newsum > pmax then return range_error(team_newsum) end
  end
end

-- 3. the write: everything below runs only after every check passed
if req ~= '' then
  local marker = member
  if nfields == 0 and newp ~= nil and not (oldc ~= nil and newc == oldc) then
    local o = ''
    if oldp ~= nil then o = num(oldp) end
    marker = member .. '\n' .. o .. '\n' .. num(newp)
  end
  if queued_entry then marker = marker .. '\n#' .. queued_entry end
  -- the window starts again: a redelivered entry must still find it
  redis.call('SET', reqkey, marker, 'EX', window)
end

if oldc ~= nil and newc == oldc then
  return answer('ok', member, 0)
end

-- the board changes: its history goes on, or starts over with a new epoch
local fresh = nil
if ekey then
  local held, empty = epoch_now()
  if held == '' then
    fresh = epoch_arg
    if fresh == '' then
      local t = redis.call('TIME')
      fresh = string.sub(redis.sha1hex(t[1] .. '.' .. t[2] .. zkey .. seq_now()), 1, 16)
    end
    if redis.call('EXISTS', zkey) == 0 or redis.call('EXISTS', seqkey) == 0 then
      redis.call('UNLINK', logkey) -- the old history's events
    end
    redis.call('DEL', ekey) -- two fields: DEL frees it at once
    redis.call('HSET', ekey, 'id', fresh)
  elseif empty then
    redis.call('HDEL', ekey, 'empty') -- the set exists again
  end
end

local oldrank = 0
if oldc then oldrank = rank_of(member) end
if arr_idx ~= nil then
  -- arrival: count the arrival at newp, and the member leaving oldp
  -- UNLINK: stale counters may hold two fields per value once held
  if arr_fresh then redis.call('UNLINK', akey) end
  local pk = num(newp)
  redis.call('HSET', akey, 'a:' .. pk, arr_idx + 1)
  redis.call('HINCRBY', akey, 'h:' .. pk, 1)
  if oldp ~= nil then
    local ok = num(oldp)
    if redis.call('HINCRBY', akey, 'h:' .. ok, -1) <= 0 then redis.call('HDEL', akey, 'a:' .. ok, 'h:' .. ok) end
  end
end
redis.call('ZADD', zkey, num(newc), member)
local rank = rank_of(member)
local seq = redis.call('INCR', seqkey)

local function jnum(x)
  if x == nil then return 'null' end
  return num(x)
end
local function jrank(r)
  if r == 0 then return 'null' end
  return tostring(r)
end
-- members and ops are restricted to JSON-safe characters by the gateway
local event = '{"seq":' .. seq .. ',"member":"' .. member .. '","op":"' .. op ..
  '","score":' .. jnum(newp) .. ',"old_score":' .. jnum(oldp) ..
  ',"c":' .. num(newc) .. ',"old_c":' .. jnum(oldc) ..
  ',"rank":' .. rank .. ',"old_rank":' .. jrank(oldrank) .. ',"at":' .. num(at)
if fresh then event = event .. ',"epoch":"' .. fresh .. '"' end
event = event .. '}'
redis.call('RPUSH', logkey, event)
redis.call('LTRIM', logkey, -logcap, -1)
if ttl > 0 then
  -- relative, so a gateway whose clock is shifted (tests) cannot expire keys at once
  redis.call('PEXPIRE', zkey, ttl)
  redis.call('PEXPIRE', seqkey, ttl)
  redis.call('PEXPIRE', logkey, ttl)
  if ekey then redis.call('PEXPIRE', ekey, ttl) end
  if arr_idx ~= nil then redis.call('PEXPIRE', akey, ttl) end
end
redis.call(pubcmd, chan, event)
if team_newsum ~= nil then
  local tslot = slot
  team_set(my_team, team_newsum, tslot, op)
end

local score = ''
if nfields == 0 then score = num(newp) end
return with_team({ 'ok', score, rank, seq, num(newc), oldrank, member, 1 }, member)
