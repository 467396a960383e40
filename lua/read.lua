-- read.lua - one consistent read of a board: its version, its size and a run
-- of rows, all from the same snapshot (a script runs atomically), so a window
-- is always labelled with the seq it reflects.
--
-- KEYS[1] rc:{B|P}:z     sorted set
-- KEYS[2] rc:{B|P}:seq   board version
-- KEYS[3] rc:{B|P}:log   change log (kind "log" only)
-- KEYS[4] rc:{B|P}:epoch the board's epoch (see "Epochs" in lua/write.lua)
-- KEYS[5] rc:{B|P}:frz   the freeze state (lua/freeze.lua)
-- KEYS[6] rc:{B|P}:fz    the frozen copy (lua/freeze.lua)
--
-- ARGV[1] kind: range | around | rank | log | counts | near | members
-- ARGV[2] order: desc | asc
-- ARGV[3] "1": the live board (an admin's live view, the archive); "0": what
--         the audience sees: while the board is frozen, the frozen copy as
--         of the shown seq R, and a log of the changes up to R only
-- range:  ARGV[4] first index (0-based), ARGV[5] last index (inclusive)
-- around: ARGV[4] member, ARGV[5] radius
-- rank:   ARGV[4] member
-- log:    (nothing) the whole capped log
-- counts: ARGV[4..] pairs (bound, inclusive), at most 512 pairs: for each,
--         the members ranked strictly better than composite `bound` (desc:
--         score > bound, or >= bound when inclusive is "1"; asc: score <
--         bound, or <= bound). A bound "" counts 0 (no pairs, or only "",
--         reads just the head). One ZCOUNT a pair (a sharded board's rank,
--         docs/sharded.md)
-- near:   ARGV[4] composite c, ARGV[5] inclusive ("1": rows scored exactly
--         c count as ahead of c), ARGV[6] radius R: the rows just ahead of
--         c and just behind it (a sharded board's around, docs/sharded.md),
--         by ranges on score with LIMIT (no scan)
-- members: ARGV[4] the tie unit for shared places, or "" (none);
--         ARGV[5..] the listed member names (a member list, PROTOCOL v1.2)
-- range and around take an optional last ARGV (ARGV[6]): the tie unit, for
--   shared places (core/rc_places.h): 2^T, or 0 to tie on equal scores
--   (decaying boards). With it the reply carries two more head items.
--
-- Reply: { seq, total, first_rank, epoch, frozen, freeze_seq, shown, fv,
--          m1, c1, m2, c2, ... }
--   seq         the seq the rows reflect (an audience read of a frozen
--               board: the shown seq R)
--   first_rank  1-based rank of m1 (range: first index + 1; around: rank of
--               the first row; 0 when the around/rank member is absent)
--   epoch       the epoch of the history seq counts in, "" while none holds
--               (never written, or its history lost: the rule of write.lua)
--   frozen      1 while the board is frozen, else 0; freeze_seq S and shown
--               R then (else 0 0); fv the freeze version (lua/freeze.lua)
--   ci          composite scores as strings
-- with a tie unit: { seq, ..., fv, above, next_tied, m1, c1, ... }
--   above       members with strictly better points than m1 (one ZCOUNT,
--               no scan), so a page starting inside a tie shows its place
--   next_tied   1 when the member right after the last row has its points
-- rank reply:  { seq, total, rank (0 absent), epoch, frozen, S, R, fv, member,
--              composite or "" }
-- log reply:   { seq, total, 0, epoch, frozen, S, R, fv, event1, event2, ... }
--              (JSON texts, oldest first; events of another history are never
--              in it: a new history drops the log)
-- counts reply: { seq, total, 0, epoch, frozen, S, R, fv, count1, count2, ... }
--              one integer per pair, in ARGV's order
-- members reply: { seq, total, 0, epoch, frozen, S, R, fv, then per listed
--              member on the board, in rank order: member, composite, rank
--              (1-based), place, tied (place and tied 0 without a tie unit) }
-- near reply:  { seq, total, 0, epoch, frozen, S, R, fv, ahead, na,
--              m1, c1, ..., m(na), c(na), then up to R+1 rows behind }
--   ahead       the members ahead of c (the inclusive rule above)
--   na          how many of them follow (at most R): the nearest ones, in
--               board order (best first), then up to R+1 rows behind c, the
--               nearest first (board order)

local z, seqkey, logkey, ekey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local kind, desc, live = ARGV[1], ARGV[2] == 'desc', ARGV[3] == '1'
local seq = tonumber(redis.call('GET', seqkey) or '0')

-- the rule of lua/write.lua, "Epochs" (read only: a read never makes one)
local function epoch_now()
  local e = redis.call('HMGET', ekey, 'id', 'empty')
  if not e[1] or redis.call('EXISTS', seqkey) == 0 then return '' end
  if e[2] ~= '1' and redis.call('EXISTS', z) == 0 then return '' end
  return e[1]
end
local epoch = epoch_now()

-- the freeze (lua/freeze.lua): it holds only in the history it was made in
local fs = redis.call('HMGET', KEYS[5], 'on', 'seq', 'shown', 'epoch', 'v')
local frozen, fseq, shown, fv = 0, 0, 0, tonumber(fs[5] or '0')
if fs[1] == '1' and (fs[4] == '' or fs[4] == epoch) then
  frozen, fseq, shown = 1, tonumber(fs[2]), tonumber(fs[3])
  if not live then
    z = KEYS[6]
    seq = shown
  end
elseif fs[1] == '1' then
  -- a void freeze (its history is gone): not frozen, and newer than the
  -- freeze (lua/freeze.lua puts it away at this version)
  fv = fv + 1
end
local total = redis.call('ZCARD', z)
local function head(first_rank)
  return { seq, total, first_rank, epoch, frozen, fseq, shown, fv }
end

local function rank0(m)
  if desc then return redis.call('ZREVRANK', z, m) end
  return redis.call('ZRANK', z, m)
end

local function fetch(first, last)
  if desc then return redis.call('ZRANGE', z, first, last, 'REV', 'WITHSCORES') end
  return redis.call('ZRANGE', z, first, last, 'WITHSCORES')
end

-- the tie key of a composite (core/rc_places.c: rc_places_key)
local function tie_key(unit, c)
  if unit > 0 then return math.floor(c / unit) end
  return c
end

local function num(x) return string.format('%.17g', x) end

-- members ranked strictly better than points of composite c
local function above(unit, c)
  if unit > 0 then
    local k = tie_key(unit, c)
    if desc then return redis.call('ZCOUNT', z, num((k + 1) * unit), '+inf') end
    return redis.call('ZCOUNT', z, '-inf', '(' .. num(k * unit))
  end
  if desc then return redis.call('ZCOUNT', z, '(' .. num(c), '+inf') end
  return redis.call('ZCOUNT', z, '-inf', '(' .. num(c))
end

-- rows first..last after head; with a tie unit (places) above and next_tied
-- go right after the head
local function rows(first, last, out, unit)
  local r = fetch(first, last)
  if unit then
    local a, nt = 0, 0
    if #r > 0 then
      a = above(unit, tonumber(r[2]))
      local nx = fetch(first + #r / 2, first + #r / 2)
      if #nx > 0 and tie_key(unit, tonumber(nx[2])) == tie_key(unit, tonumber(r[#r])) then nt = 1 end
    end
    out[#out + 1] = a
    out[#out + 1] = nt
  end
  for i = 1, #r do out[#out + 1] = r[i] end
  return out
end

if kind == 'range' then
  local first, last = tonumber(ARGV[4]), tonumber(ARGV[5])
  return rows(first, last, head(first + 1), tonumber(ARGV[6]))
elseif kind == 'around' then
  local r = rank0(ARGV[4])
  local unit = tonumber(ARGV[6])
  if not r then
    local out = head(0)
    if unit then out[#out + 1] = 0; out[#out + 1] = 0 end
    return out
  end
  local radius = tonumber(ARGV[5])
  local first = r - radius
  if first < 0 then first = 0 end
  return rows(first, r + radius, head(first + 1), unit)
elseif kind == 'rank' then
  local r = rank0(ARGV[4])
  local out = head(0)
  if not r then
    out[#out + 1] = ARGV[4]; out[#out + 1] = ''
    return out
  end
  out[3] = r + 1
  out[#out + 1] = ARGV[4]; out[#out + 1] = redis.call('ZSCORE', z, ARGV[4])
  return out
elseif kind == 'log' then
  local out = head(0)
  local entries = redis.call('LRANGE', logkey, 0, -1)
  for i = 1, #entries do
    -- the audience of a frozen board: the changes up to what it is shown
    if live or frozen == 0 or tonumber(string.match(entries[i], '^{"seq":(%d+)') or '0') <= shown then
      out[#out + 1] = entries[i]
    end
  end
  return out
elseif kind == 'counts' then
  local np = (#ARGV - 3) / 2
  if (#ARGV - 3) % 2 ~= 0 or np > 512 then
    return redis.error_reply('read.lua: counts takes up to 512 (bound, inclusive) pairs')
  end
  for i = 4, #ARGV, 2 do
    if ARGV[i] ~= '' and not tonumber(ARGV[i]) then
      return redis.error_reply('read.lua: counts bound is not a number')
    end
  end
  local out = head(0)
  for i = 4, #ARGV, 2 do
    local b, n = ARGV[i], 0
    if b ~= '' then
      if ARGV[i + 1] ~= '1' then b = '(' .. b end
      if desc then n = redis.call('ZCOUNT', z, b, '+inf') else n = redis.call('ZCOUNT', z, '-inf', b) end
    end
    out[#out + 1] = n
  end
  return out
elseif kind == 'near' then
  local c, incl, radius = ARGV[4], ARGV[5] == '1', tonumber(ARGV[6])
  if not tonumber(c) or not radius or radius < 0 or radius ~= math.floor(radius) then
    return redis.error_reply('read.lua: near takes a composite, an inclusive flag and a radius')
  end
  -- the bound on ahead's side and on behind's side of c
  local a_end, b_end = '(' .. c, c
  if incl then a_end, b_end = c, '(' .. c end
  local ahead, nearer, behind = 0, {}, {}
  if desc then
    ahead = redis.call('ZCOUNT', z, a_end, '+inf')
    if radius > 0 then
      nearer = redis.call('ZRANGE', z, a_end, '+inf', 'BYSCORE', 'LIMIT', 0, radius, 'WITHSCORES')
    end
    behind = redis.call('ZRANGE', z, b_end, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, radius + 1, 'WITHSCORES')
  else
    ahead = redis.call('ZCOUNT', z, '-inf', a_end)
    if radius > 0 then
      nearer = redis.call('ZRANGE', z, a_end, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, radius, 'WITHSCORES')
    end
    behind = redis.call('ZRANGE', z, b_end, '+inf', 'BYSCORE', 'LIMIT', 0, radius + 1, 'WITHSCORES')
  end
  local out = head(0)
  out[#out + 1] = ahead
  out[#out + 1] = #nearer / 2
  -- nearer runs away from c (the exact reverse of board order): turn it
  for i = #nearer - 1, 1, -2 do
    out[#out + 1] = nearer[i]; out[#out + 1] = nearer[i + 1]
  end
  for i = 1, #behind do out[#out + 1] = behind[i] end
  return out
elseif kind == 'members' then
  local unit = tonumber(ARGV[4])
  local found = {}
  for i = 5, #ARGV do
    local c = redis.call('ZSCORE', z, ARGV[i])
    if c then found[#found + 1] = { ARGV[i], c, rank0(ARGV[i]) + 1 } end
  end
  table.sort(found, function(a, b) return a[3] < b[3] end)
  local out = head(0)
  for _, f in ipairs(found) do
    local place, tied = 0, 0
    if unit then
      local c = tonumber(f[2])
      place = above(unit, c) + 1
      local same
      if unit > 0 then
        local k = tie_key(unit, c)
        same = redis.call('ZCOUNT', z, num(k * unit), '(' .. num((k + 1) * unit))
      else
        same = redis.call('ZCOUNT', z, f[2], f[2])
      end
      if same > 1 then tied = 1 end
    end
    out[#out + 1] = f[1]; out[#out + 1] = f[2]; out[#out + 1] = f[3]
    out[#out + 1] = place; out[#out + 1] = tied
  end
  return out
end
return redis.error_reply('read.lua: unknown kind ' .. tostring(kind))
