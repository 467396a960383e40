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
-- ARGV[1] kind: range | around | rank | log | counts | near | members | roster | moment
--         | changes | base (a chain: at the kinds, below)
-- ARGV[2] order: desc | asc
-- ARGV[3] "1": the live board (an admin's live view, the archive); "0": what
--         the audience sees: while the board is frozen, the frozen copy as
--         of the shown seq R, and a log of the changes up to R only
-- range:  ARGV[4] first index (0-based), ARGV[5] last index (inclusive)
-- around: ARGV[4] member, ARGV[5] radius
-- rank:   ARGV[4] member
-- log:    ARGV[4], ARGV[5] (both or neither): at most ARGV[5] changes after
--         seq ARGV[4] (a feed's replay); neither: the whole log
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
-- roster: ARGV[4] as members; ARGV[5] K, the most rows to return (0: all);
--         ARGV[6] the team's members joined by spaces (one argument, any
--         count: a team of any size, docs/teams.md): its best K by rank
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
-- roster reply: { seq, total, 0, epoch, frozen, S, R, fv, found, then the
--              members reply's rows for the best K of them }; found: the
--              listed members on the board (more than the rows: cut at K)
-- near reply:  { seq, total, 0, epoch, frozen, S, R, fv, ahead, na,
--              m1, c1, ..., m(na), c(na), then up to R+1 rows behind }
--   ahead       the members ahead of c (the inclusive rule above)
--   na          how many of them follow (at most R): the nearest ones, in
--               board order (best first), then up to R+1 rows behind c, the
--               nearest first (board order)

-- moment: the board at past seqs, rebuilt from the present set and the
--   change log (docs/history.md; core/rc_moment.h does the rebuild). Read
--   with ARGV[3] "1" (the live set: the rebuild undoes the present).
--   ARGV[4] seq | time: what the targets name; ARGV[5] "1": the audience of
--   a frozen board, whose targets stop at the shown seq R; ARGV[6] range |
--   around | points | list | counts | near; ARGV[7], ARGV[8]: range first,
--   count; around member, radius; points member, "" (or a seq: a segmented
--   read, below; "0" none); list: the listed
--   members joined by spaces, ""; counts: one bound a target joined by
--   spaces, ""; near: one bound, radius (a bound in ZCOUNT's syntax on the
--   side ahead of it: "(c" or "c"; "-" none: counts 0; a sharded board's
--   other shards); ARGV[9] history_undo_max: the most changes the read may
--   undo ("0": no cap); ARGV[10..] the targets (one for range, around, list
--   and near, up to 1000 for points and counts), a seq or a time (ms) each.
--   A target seq S is shown as it is; a time, as the highest seq whose
--   change's "at" is at or before it (0 when the log holds every change and
--   none is). The oldest seq shown: 0 while the log starts at seq 1, else
--   the log's first seq (its change's time must be known).
-- moment reply: { head..., status, oldest, smin, nev, then per event
--   after smin: seq, member, c, old_c ("" for null),
--   ntargets, then per target: S, at ("" at seq 0 or when not held),
--   composite at S of points' member ("" absent), ahead (counts, near: ""
--   and the present members ahead of the target's bound); then (range,
--   around, near) lo, m1, c1, ...; (list) per listed member in the order given:
--   its composite at S ("" absent), ahead }
--   status   ok | beyond (a seq past the present; nothing follows
--            oldest) | gone (a target before oldest) | deep (a target more
--            than ARGV[9] changes before its base, the nearest checkpoint
--            at or after every target or else the present: oldest is then
--            the base minus the cap, the oldest seq that base serves);
--            gone and deep: oldest's change time follows ("" for seq 0 or
--            not held), the earliest time a read by time can name, then
--            nothing; but deep about one moment with a checkpoint on
--            either side adds that moment's seq, its time and the nearer
--            such checkpoint C, to read it from C in bounded calls (kinds
--            changes and base: docs/history.md, "A moment no base serves
--            within the cap")
--   Checkpoints (lua/ckpt.lua): rc:{B|P}:ck indexes copies of the set at
--   seqs C (rc:{B|P}:ck:C, same tag). With one at or after every target the
--   read undoes from it: total in the head, the slice, ahead and the
--   present composites below are the checkpoint's, and the events run
--   from smin to C only. A single target S nearer to a checkpoint C' before
--   it is redone from C' instead: the events are then the changes in
--   (C', S], newest first, each with c and old_c swapped and numbered
--   S+1, S+2, ... (an undo of them is their redo).
--   Segmented points (ARGV[8] a seq B, "0" for none; targets ascending;
--   docs/history.md, "Rank history at any span"): the reply answers only
--   the newest targets (at or before B) that one base serves within the
--   cap: ntargets is then how many, each in the order given; the caller
--   asks again for the older ones with B the oldest seq shown. Its status
--   is "redo" when the base is the checkpoint before them (the changes
--   redone numbered from the newest target smax up, so a point at S undoes
--   those after 2 smax - S).
--   events   the log's changes after smin (the smallest S), oldest first
--   ahead    points: members of the present set before that composite in
--            the set's order (ties by name as Redis orders them)
--   lo       0-based present rank of m1: the slice of the present set that
--            answers the window at S (core/rc_moment.h, rc_moment_margin)

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

-- The change log and the checkpoints (kinds moment, changes, base): a log
-- entry's seq and time; the log's first seq, length and the oldest seq a read
-- can show (0 while the log starts at seq 1); a checkpoint C of this history
-- whose key still exists (lua/ckpt.lua); the members of set zl before
-- composite c, member m, in Redis's order of the set (names break ties)
local function seq_of(e) return tonumber(string.match(e, '^{"seq":(%d+)')) end
local function at_of(e) return tonumber(string.match(e, '"at":(%-?[%d.e+]+)')) end
local ckx = string.sub(KEYS[1], 1, -2) .. 'ck'
local function log_bounds(cur)
  local nlog = redis.call('LLEN', KEYS[3])
  local first = cur + 1
  if nlog > 0 then first = seq_of(redis.call('LINDEX', KEYS[3], 0)) end
  local oldest = first
  if first == 1 then oldest = 0 end
  if nlog == 0 then oldest = cur end
  return first, nlog, oldest
end
local function ck_held(c, e)
  return e == epoch and redis.call('EXISTS', ckx .. ':' .. c) == 1
end
local function ahead_in(zl, c, m)
  local n, same
  if desc then
    n = redis.call('ZCOUNT', zl, '(' .. num(c), '+inf')
  else
    n = redis.call('ZCOUNT', zl, '-inf', '(' .. num(c))
  end
  same = redis.call('ZRANGE', zl, num(c), num(c), 'BYSCORE')
  for i = 1, #same do
    if (desc and same[i] > m) or (not desc and same[i] < m) then n = n + 1 end
  end
  return n
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
  local from, to = 0, -1
  if ARGV[4] then
    -- a bounded read (a feed's replay): up to ARGV[5] changes after seq ARGV[4]
    local e0 = redis.call('LINDEX', logkey, 0)
    local first = tonumber(e0 and string.match(e0, '^{"seq":(%d+)') or '1')
    from = math.max(0, tonumber(ARGV[4]) + 1 - first)
    to = from + tonumber(ARGV[5]) - 1
  end
  local entries = redis.call('LRANGE', logkey, from, to)
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
elseif kind == 'members' or kind == 'roster' then
  local unit = tonumber(ARGV[4])
  local names, limit, argn = {}, 0, 5
  if kind == 'roster' then
    limit, argn = tonumber(ARGV[5]), 7
    for m in string.gmatch(ARGV[6], '%S+') do names[#names + 1] = m end
  end
  for i = argn, #ARGV do names[#names + 1] = ARGV[i] end
  -- the listed members on the board: names and composites in plain
  -- arrays (a team of 100,000 makes no table per member)
  local fn, fs, fc = {}, {}, {}
  for i = 1, #names do
    local c = redis.call('ZSCORE', z, names[i])
    if c then
      local k = #fn + 1
      fn[k] = names[i]; fs[k] = c; fc[k] = tonumber(c)
    end
  end
  -- the best `limit` in board order: those better than the limit-th best
  -- composite, then those tied on it by rank, as Redis orders equal scores;
  -- ranks only for those (a team of any size: one ZSCORE a member, one
  -- sort of plain numbers, and about `limit` rank lookups)
  local rows = {}
  local function row(j) return { fn[j], fs[j], fc[j] } end
  if limit > 0 and #fn > limit then
    local cs = {}
    for j = 1, #fc do cs[j] = fc[j] end
    table.sort(cs)
    local edge = cs[limit]
    if desc then edge = cs[#cs - limit + 1] end
    local tied = {}
    for j = 1, #fn do
      local c = fc[j]
      if c == edge then tied[#tied + 1] = row(j)
      elseif (desc and c > edge) or (not desc and c < edge) then rows[#rows + 1] = row(j) end
    end
    for j = 1, #tied do tied[j][4] = rank0(tied[j][1]) end
    table.sort(tied, function(a, b) return a[4] < b[4] end)
    for j = 1, limit - #rows do rows[#rows + 1] = tied[j] end
  else
    for j = 1, #fn do rows[j] = row(j) end
  end
  local keep = #rows
  for j = 1, keep do
    local f = rows[j]
    if not f[4] then f[4] = rank0(f[1]) end
  end
  table.sort(rows, function(a, b) return a[4] < b[4] end)
  local out = head(0)
  if kind == 'roster' then out[#out + 1] = #fn end
  for j = 1, keep do
    local f = rows[j]
    local place, tied = 0, 0
    if unit then
      local c = f[3]
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
    out[#out + 1] = f[1]; out[#out + 1] = f[2]; out[#out + 1] = f[4] + 1
    out[#out + 1] = place; out[#out + 1] = tied
  end
  return out
elseif kind == 'changes' or kind == 'base' then
  -- A chain (docs/history.md, "A moment no base serves within the cap"):
  -- moment's "deep" names a checkpoint C to rebuild the moment from; the
  -- gateway reads the changes between them in calls of at most the cap
  -- (changes), then what the rebuild needs of C (base). Both read the
  -- live history (ARGV[3] "1") and answer "gone" (then oldest, its time,
  -- as moment does) once C or the changes are no longer this history's.
  -- changes: ARGV[4] after, ARGV[5] upto: the changes in (after, upto];
  --   ARGV[6] the epoch, ARGV[7] C. Reply: head, "ok", n, then per change
  --   seq, member, c, old_c ("" for null), oldest first.
  -- base: ARGV[4] C, ARGV[5] the epoch, ARGV[6] range | around | counts | near
  --   | probes;
  --   range: ARGV[7] lo, ARGV[8] hi: C's rows at ranks lo..hi (0-based);
  --   counts: ARGV[7] bounds joined by spaces (moment's syntax): the members
  --   of C ahead of each; near: ARGV[7] a bound, ARGV[8] reach: the members
  --   ahead of it, then C's rows from reach before that count to reach past;
  --   around: ARGV[7] member, ARGV[8] its composite at the moment ("" absent,
  --   "?" C's own), ARGV[9] reach: C's rows from reach before that place
  --   to reach past it and its ties; probes: ARGV[7] members joined by
  --   spaces, ARGV[8] their composites at the moment joined by spaces ("-"
  --   absent, "?" C's own). Reply: head (total: C's ZCARD), "ok", then
  --   range and around: lo, m1, c1, ...; counts: one count a bound; near:
  --   the count, lo, m1, c1, ...; probes: per member its composite ("" absent)
  --   and the members of C ahead of it.
  local cur = tonumber(redis.call('GET', seqkey) or '0')
  local first, nlog, oldest = log_bounds(cur)
  local out = head(0)
  local c = ARGV[7]
  if kind == 'base' then c = ARGV[4] end
  local e = ARGV[6]
  if kind == 'base' then e = ARGV[5] end
  local held = ck_held(c, e) and tonumber(c) >= first - 1 and tonumber(c) <= cur
  if held and kind == 'changes' then
    held = tonumber(ARGV[4]) >= first - 1 and tonumber(ARGV[5]) <= cur
  end
  if not held then
    local at = ''
    if oldest >= first and oldest > 0 and nlog > 0 then at = num(at_of(redis.call('LINDEX', logkey, oldest - first))) end
    out[#out + 1] = 'gone'; out[#out + 1] = oldest; out[#out + 1] = at
    return out
  end
  if kind == 'changes' then
    local evs = {}
    if tonumber(ARGV[5]) > tonumber(ARGV[4]) then
      evs = redis.call('LRANGE', logkey, tonumber(ARGV[4]) + 1 - first, tonumber(ARGV[5]) - first)
    end
    out[#out + 1] = 'ok'; out[#out + 1] = #evs
    for i = 1, #evs do
      local ev = evs[i]
      local nc, oc = string.match(ev, '"c":([^,}]+)'), string.match(ev, '"old_c":([^,}]+)')
      if nc == nil or nc == 'null' then nc = '' end
      if oc == nil or oc == 'null' then oc = '' end
      out[#out + 1] = seq_of(ev); out[#out + 1] = string.match(ev, '"member":"([^"]*)"') or ''
      out[#out + 1] = nc; out[#out + 1] = oc
    end
    return out
  end
  local ck = ckx .. ':' .. c
  out[2] = redis.call('ZCARD', ck)
  out[#out + 1] = 'ok'
  local function slice(lo, hi)
    out[#out + 1] = lo
    if hi < lo then return out end
    local rs
    if desc then rs = redis.call('ZRANGE', ck, lo, hi, 'REV', 'WITHSCORES')
    else rs = redis.call('ZRANGE', ck, lo, hi, 'WITHSCORES') end
    for i = 1, #rs do out[#out + 1] = rs[i] end
    return out
  end
  local function comp(m, given)
    if given == '?' then return tonumber(redis.call('ZSCORE', ck, m)) end
    return tonumber(given)
  end
  if ARGV[6] == 'range' then return slice(tonumber(ARGV[7]), tonumber(ARGV[8])) end
  -- (a bound in ZCOUNT's syntax: "(c" or "c" on the side ahead of it, "-"
  -- none: counts 0; moment's counts and near)
  local function bound_count(b)
    if b == nil or b == '-' then return 0 end
    if desc then return redis.call('ZCOUNT', ck, b, '+inf') end
    return redis.call('ZCOUNT', ck, '-inf', b)
  end
  if ARGV[6] == 'counts' then
    for b in string.gmatch(ARGV[7], '%S+') do out[#out + 1] = bound_count(b) end
    return out
  end
  if ARGV[6] == 'near' then
    local p, reach = bound_count(ARGV[7]), tonumber(ARGV[8])
    out[#out + 1] = p
    return slice(math.max(0, p - reach), p + reach)
  end
  if ARGV[6] == 'around' then
    local m, reach = ARGV[7], tonumber(ARGV[9])
    local cm = comp(m, ARGV[8])
    if not cm then return slice(0, -1) end
    local p = ahead_in(ck, cm, m)
    local eq = redis.call('ZCOUNT', ck, num(cm), num(cm))
    return slice(math.max(0, p - reach), p + eq + reach)
  end
  local given = {}
  for g in string.gmatch(ARGV[8], '%S+') do given[#given + 1] = g end
  local i = 0
  for m in string.gmatch(ARGV[7], '%S+') do
    i = i + 1
    local cm = nil
    if given[i] ~= '-' then cm = comp(m, given[i] or '?') end
    if cm then
      out[#out + 1] = num(cm); out[#out + 1] = ahead_in(ck, cm, m)
    else
      out[#out + 1] = ''; out[#out + 1] = 0
    end
  end
  return out
elseif kind == 'moment' then
  local zl, cur = KEYS[1], tonumber(redis.call('GET', seqkey) or '0')
  local limit = cur
  if frozen == 1 and ARGV[5] == '1' then limit = shown end
  local out = head(0)
  local first, nlog, oldest = log_bounds(cur)
  -- history_undo_max (docs/history.md, "The bound"): every change between a
  -- target and the base (the nearest checkpoint after it, or the present)
  -- is undone in this script, so a target more than the cap before its base
  -- is refused before any change is read (deeper reads held Redis for
  -- seconds); `deep` bounds the walk of a search by time the same way
  local undo_max, deep = tonumber(ARGV[9]) or 0, 0
  if undo_max > 0 and cur - undo_max > oldest then deep = cur - undo_max end
  local targets, view = {}, ARGV[6]
  for i = 10, #ARGV do targets[#targets + 1] = tonumber(ARGV[i]) end
  -- points with ARGV[8] a seq: a segmented read (below), "0" from the limit
  local seg = view == 'points' and ARGV[8] ~= nil and ARGV[8] ~= ''
  local below = tonumber(ARGV[8]) or 0
  -- each target's seq (and time); by time: one pass from the newest change
  -- the time of a held change (what a read by time can name), "" for seq 0
  -- (every time shows it) or a seq the log does not hold
  local function time_of(s)
    if s < first or s < 1 or s - first >= nlog then return '' end
    return num(at_of(redis.call('LINDEX', logkey, s - first)))
  end
  -- the first usable checkpoint of cands (this history's, its key there)
  local function usable(cands)
    for i = 1, #cands do
      local c, e = string.match(cands[i], '^(%d+):(.*)$')
      if ck_held(c, e) then return tonumber(c) end
    end
    return nil
  end
  -- a moment S no base serves within the cap: the checkpoint a chain of
  -- bounded calls rebuilds it from (kinds changes and base, below), the
  -- nearer of the one after S (up, unless the present) and the one before
  -- it (down; looked up when not given); nothing without either
  local function refuse_deep(s, up, down)
    local b = nil
    if s ~= nil then
      if down == nil and s > 0 then
        down = usable(redis.call('ZREVRANGEBYSCORE', ckx, s, math.max(0, first - 1), 'LIMIT', 0, 8))
      end
      if up ~= cur then b = up end
      if down and (not b or s - down < b - s) then b = down end
    end
    -- oldest: the oldest seq a read shows (with a checkpoint each moment
    -- of the log is served, by a chain if need be; else the present's reach)
    local d = math.max(oldest, up - undo_max)
    if b then d = oldest end
    out[#out + 1] = 'deep'; out[#out + 1] = d; out[#out + 1] = time_of(d)
    if b then out[#out + 1] = s; out[#out + 1] = time_of(s); out[#out + 1] = b end
    return out
  end
  local S, T = {}, {}
  local smin, smax, base, redo, after = limit, 0, cur, nil, cur
  -- the targets a segmented points read answers (its newest ones)
  local answered = {}
  if seg then
    -- A segmented points read (ARGV[8] a seq, "0" for none: docs/history.md,
    -- "Rank history at any span"): the newest targets that one base
    -- serves within the cap, the older ones left for the next call, whose
    -- ARGV[8] is the oldest seq this one showed (every older target lies at
    -- or before it). The base: the checkpoint at or after the newest target
    -- (or the present), undone down to it minus the cap; or the checkpoint
    -- before it, redone up to it, when that reaches deeper. Each call
    -- reads at most about three caps of log entries and undoes one.
    local order = {}
    for i = 1, #targets do order[i] = i end
    table.sort(order, function(a, b) return targets[a] > targets[b] end)
    local top = limit
    if below > 0 and below < top then top = below end
    local moved = {}
    local function gone()
      out[#out + 1] = 'gone'; out[#out + 1] = oldest; out[#out + 1] = time_of(oldest)
      return out
    end
    -- settles order[k..] by time walking the log down from seq hi while
    -- seqs are at least lo: the next target unsettled, and whether the walk
    -- stopped at lo (else it ran out of targets or of log)
    local function walk(k, hi, lo)
      local idx, ci, chunk = hi - first, 0, {}
      while k <= #order and idx >= 0 do
        if ci == 0 then
          chunk = redis.call('LRANGE', logkey, math.max(0, idx - 255), idx)
          ci = #chunk
        end
        local e = chunk[ci]
        local sq, at = seq_of(e), at_of(e)
        if sq < lo then return k, true end
        while k <= #order and at <= targets[order[k]] do
          S[order[k]], T[order[k]] = sq, at
          moved[order[k]] = string.find(e, '"move":1', 1, true) ~= nil
          k = k + 1
        end
        ci = ci - 1
        idx = idx - 1
      end
      return k, false
    end
    local k, stopped, walked_to = 1, false, nil
    if ARGV[4] == 'seq' then
      for i = 1, #targets do
        if targets[i] > cur then
          out[#out + 1] = 'beyond'; out[#out + 1] = oldest
          return out
        end
        S[i] = math.min(targets[i], limit)
        if S[i] < oldest then return gone() end
        if S[i] >= first and S[i] > 0 then
          moved[i] = string.find(redis.call('LINDEX', logkey, S[i] - first) or '', '"move":1', 1, true) ~= nil
        end
      end
      k = #order + 1
    else
      -- a time older than every change held: gone (seq 0 when the log
      -- holds every change)
      local oldest_t = targets[order[#order]]
      if nlog == 0 and cur > 0 then return gone() end
      if first > 1 and nlog > 0 and oldest_t < at_of(redis.call('LINDEX', logkey, 0)) then return gone() end
      -- the newest target: a walk of at most the cap, else a binary search
      local lo = -1
      if undo_max > 0 then lo = top - undo_max end
      k, stopped = walk(1, top, lo)
      if stopped then walked_to = lo end
      if k == 1 and stopped then
        local l, h = 0, top - first
        while l <= h do
          local mid = math.floor((l + h) / 2)
          if at_of(redis.call('LINDEX', logkey, mid)) <= targets[order[1]] then l = mid + 1 else h = mid - 1 end
        end
        if h >= 0 then
          local e = redis.call('LINDEX', logkey, h)
          S[order[1]], T[order[1]] = seq_of(e), at_of(e)
          moved[order[1]] = string.find(e, '"move":1', 1, true) ~= nil
        else
          S[order[1]] = 0
        end
        k, walked_to = 2, nil
      end
      -- older than every change: seq 0 (the log holds them all)
      if k == 1 then
        for j = 1, #order do S[order[j]] = 0 end
        k = #order + 1
      end
    end
    -- a target on the first half of a team move shows the move whole
    local function settle_move(i)
      if moved[i] then
        if S[i] + 1 <= limit then S[i], T[i] = S[i] + 1, nil else S[i], T[i] = S[i] - 1, nil end
        moved[i] = false
      end
    end
    settle_move(order[1])
    smax = S[order[1]]
    -- the base: undo from the checkpoint at or after smax (or the present),
    -- or redo from the one before it, whichever reaches deeper within the cap
    local up = cur
    if smax < cur then
      up = usable(redis.call('ZRANGEBYSCORE', ckx, smax, '(' .. cur, 'LIMIT', 0, 8)) or cur
    end
    local down = nil
    if smax > 0 then down = usable(redis.call('ZREVRANGEBYSCORE', ckx, smax, math.max(0, first - 1), 'LIMIT', 0, 8)) end
    local undo_ok = undo_max == 0 or up - smax <= undo_max
    local redo_ok = down ~= nil and smax - down <= undo_max
    local floor = -1
    if undo_ok and (not redo_ok or undo_max == 0 or up - undo_max <= down) then
      base, after = up, up
      if up ~= cur then zl = ckx .. ':' .. up end
      if undo_max > 0 then floor = up - undo_max end
    elseif redo_ok then
      redo, base, after, floor = down, smax, up, down
      zl = ckx .. ':' .. down
    else
      return refuse_deep(smax, up, down or false)
    end
    -- the older targets down to the floor (the walk goes on where it
    -- stopped, or from the newest target when that took a search)
    if k <= #order then
      local from = smax
      if walked_to then from = walked_to - 1 end
      if from >= floor then
        local cut
        k, cut = walk(k, from, math.max(floor, 0))
        -- the log walked to its start: the rest are before every change
        if not cut and k <= #order and first == 1 then
          for j = k, #order do S[order[j]] = 0 end
          k = #order + 1
        end
      end
    end
    -- answered: the settled targets at or above the floor, newest first
    local n = 0
    for j = 1, k - 1 do
      local i = order[j]
      settle_move(i)
      if S[i] < floor then break end
      n = j
      if S[i] < smin then smin = S[i] end
    end
    if smin > smax then smin = smax end
    for j = 1, n do answered[order[j]] = true end
  else
    if ARGV[4] == 'seq' then
      for i = 1, #targets do
        if targets[i] > cur then
          out[#out + 1] = 'beyond'; out[#out + 1] = oldest
          return out
        end
        S[i] = math.min(targets[i], limit)
      end
    else
      local order = {}
      for i = 1, #targets do order[i] = i end
      table.sort(order, function(a, b) return targets[a] > targets[b] end)
      local k, idx, chunk = 1, nlog - 1, {}
      local ci, capped = 0, false
      while k <= #order do
        if idx < 0 then break end
        if ci == 0 then
          local from = math.max(0, idx - 255)
          chunk = redis.call('LRANGE', logkey, from, idx)
          ci = #chunk
        end
        local e = chunk[ci]
        local sq, at = seq_of(e), at_of(e)
        -- past the cap: the targets left are all deeper (no need to look)
        if deep > 0 and sq < deep then capped = true; break end
        while k <= #order and sq <= limit and at <= targets[order[k]] do
          S[order[k]], T[order[k]] = sq, at
          k = k + 1
        end
        ci = ci - 1
        idx = idx - 1
      end
      -- past the cap (checkpoints serve deeper: docs/history.md,
      -- "Checkpoints"): a binary search by time over the log's older part,
      -- whose times are in seq order (the gateways' clocks), not a walk
      if capped then
        local top = math.min(idx, limit - first)
        for j = k, #order do
          local t = targets[order[j]]
          local lo, hi = 0, top
          while lo <= hi do
            local mid = math.floor((lo + hi) / 2)
            if at_of(redis.call('LINDEX', logkey, mid)) <= t then lo = mid + 1 else hi = mid - 1 end
          end
          if hi >= 0 then
            local e = redis.call('LINDEX', logkey, hi)
            S[order[j]], T[order[j]] = seq_of(e), at_of(e)
          elseif first == 1 then
            S[order[j]] = 0
          end
        end
        k = #order + 1
      end
      -- older than every logged change: seq 0 when the log holds them all
      for j = k, #order do
        if first == 1 or (nlog == 0 and cur == 0) then S[order[j]] = 0 end
      end
    end
    -- a target on the first half of a team move (its event says "move":1)
    -- shows the move whole: the seq after it, or before it past the limit
    for i = 1, #targets do
      local s = S[i]
      if s and s >= first and s > 0 then
        local e = redis.call('LINDEX', logkey, s - first)
        if e and string.find(e, '"move":1', 1, true) then
          if s + 1 <= limit then S[i], T[i] = s + 1, nil else S[i], T[i] = s - 1, nil end
        end
      end
    end
    smin, smax = limit, 0
    for i = 1, #targets do
      if S[i] == nil or S[i] < oldest then
        out[#out + 1] = 'gone'; out[#out + 1] = oldest; out[#out + 1] = time_of(oldest)
        return out
      end
      if S[i] < smin then smin = S[i] end
      if S[i] > smax then smax = S[i] end
    end
    -- the base the read undoes from: the nearest checkpoint at or after every
    -- target (lua/ckpt.lua: the set exactly as it stood after change C, in
    -- this history), else the present. Its set stands in for the live one
    -- below, and only the changes up to it are undone.
    base = cur
    if smax < cur then
      local c = usable(redis.call('ZRANGEBYSCORE', ckx, smax, '(' .. cur, 'LIMIT', 0, 8))
      if c then base, zl = c, ckx .. ':' .. c end
    end
    -- one moment (every target at one seq): a checkpoint C' before it may be nearer, and
    -- the moment is then the changes in (C', S] redone on it: each member
    -- they touched at the new composite of its last one. That is an undo of
    -- those changes in reverse order with new and old swapped, so it goes
    -- out as one (seqs S+1.. in that order) and the rebuild is the same:
    -- every moment lies within half the interval of a checkpoint. (One
    -- seq only: a sharded board's counts at many times took it too, and
    -- showed each time at the newest one's state. Points at one seq are
    -- redone as well: their composite and count are the redo's.)
    redo, after = nil, base
    if smin == smax and smax > 0 then
      local c = usable(redis.call('ZREVRANGEBYSCORE', ckx, smax, math.max(0, first - 1), 'LIMIT', 0, 8))
      if c and smax - c < base - smin then redo, base, zl = c, smax, ckx .. ':' .. c end
    end
    -- the cap bounds the changes undone (redone) from that base: past it, the
    -- oldest seq the checkpoint after the target serves
    if undo_max > 0 and ((redo and smax - redo > undo_max) or (not redo and base - smin > undo_max)) then
      -- (the oldest seq the base after the target serves: a redo from the
      -- checkpoint before it is refused only when that one is too far as
      -- well; one moment is then served by a chain)
      if smin ~= smax then return refuse_deep(nil, after) end
      return refuse_deep(smax, after, redo)
    end
  end
  if zl ~= KEYS[1] then out[2] = redis.call('ZCARD', zl) end
  if seg and redo then out[#out + 1] = 'redo' else out[#out + 1] = 'ok' end
  out[#out + 1] = oldest; out[#out + 1] = smin
  local evs = {}
  if redo then
    if redo < smax then evs = redis.call('LRANGE', logkey, redo + 1 - first, smax - first) end
  elseif smin < base then
    evs = redis.call('LRANGE', logkey, smin + 1 - first, base - first)
  end
  out[#out + 1] = #evs
  -- the changes of the member the view is about (around, points): its
  -- composite at any seq without another pass over the log
  local who = ''
  if view == 'around' or view == 'points' then who = ARGV[7] end
  local mine_seq, mine_old = {}, {}
  -- list: each listed member's changes, as the one member's above
  local listed, lseq, lold = {}, {}, {}
  if view == 'list' then
    for m in string.gmatch(ARGV[7], '%S+') do
      listed[#listed + 1] = m; lseq[m] = {}; lold[m] = {}
    end
  end
  local touched, k = {}, 0
  for i = 1, #evs do
    local e = evs[i]
    if redo then e = evs[#evs + 1 - i] end
    local m = string.match(e, '"member":"([^"]*)"') or ''
    local c, oc = string.match(e, '"c":([^,}]+)'), string.match(e, '"old_c":([^,}]+)')
    if c == 'null' then c = '' end
    if oc == 'null' then oc = '' end
    local sq = seq_of(e)
    if redo then c, oc, sq = oc, c, smax + i end
    out[#out + 1] = sq; out[#out + 1] = m; out[#out + 1] = c or ''; out[#out + 1] = oc or ''
    if not touched[m] then touched[m] = true; k = k + 1 end
    if m == who then mine_seq[#mine_seq + 1] = sq; mine_old[#mine_old + 1] = oc or '' end
    if lseq[m] then local q = lseq[m]; q[#q + 1] = sq; lold[m][#q] = oc or '' end
  end
  local present = nil
  if who ~= '' then present = redis.call('ZSCORE', zl, who) end
  -- the member's composite at seq s: the old_c of its first change after s
  -- (a binary search over its changes), else the present one; nil when absent
  local function comp_of(s, sq, old, now)
    local lo, hi = 1, #sq + 1
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if sq[mid] <= s then lo = mid + 1 else hi = mid end
    end
    if lo <= #sq then
      if old[lo] == '' then return nil end
      return tonumber(old[lo])
    end
    if now then return tonumber(now) end
    return nil
  end
  local function comp_at(s) return comp_of(s, mine_seq, mine_old, present) end
  -- present members before composite c, member m (Redis's order of the set)
  local function ahead(c, m) return ahead_in(zl, c, m) end
  -- counts, near: the present members ahead of a bound, by composite alone
  -- (ZCOUNT's syntax: "(c" strictly better than c, "c" better or equal; "-"
  -- none): a sharded board's other shards (store/gw_read_at_member.c,
  -- store/gw_read_at_list.c)
  local bounds = {}
  if view == 'counts' or view == 'near' then
    for b in string.gmatch(ARGV[7], '%S+') do bounds[#bounds + 1] = b end
    if #bounds ~= #targets and not (view == 'near' and #bounds == 1) then
      return redis.error_reply('read.lua: moment counts takes one bound a target')
    end
  end
  local function bound_count(b)
    if b == nil or b == '-' then return 0 end
    if desc then return redis.call('ZCOUNT', zl, b, '+inf') end
    return redis.call('ZCOUNT', zl, '-inf', b)
  end
  local nans = #targets
  if seg then
    nans = 0
    for i = 1, #targets do if answered[i] then nans = nans + 1 end end
  end
  out[#out + 1] = nans
  for i = 1, #targets do
   if not seg or answered[i] then -- (a segmented read: its newest targets only)
    local at = T[i]
    if at == nil and S[i] >= first and S[i] > 0 then at = at_of(redis.call('LINDEX', logkey, S[i] - first)) end
    out[#out + 1] = S[i]
    if at then out[#out + 1] = num(at) else out[#out + 1] = '' end
    if view == 'points' then
      -- (a redo numbers its changes S+1.. from the newest: the changes
      -- after the virtual seq 2 smax - S are those in (redo, S])
      local c
      if redo then c = comp_at(2 * smax - S[i]) else c = comp_at(S[i]) end
      if c then
        out[#out + 1] = num(c); out[#out + 1] = ahead(c, ARGV[7])
      else
        out[#out + 1] = ''; out[#out + 1] = 0
      end
    elseif view == 'counts' or view == 'near' then
      out[#out + 1] = ''; out[#out + 1] = bound_count(bounds[i])
    else
      out[#out + 1] = ''; out[#out + 1] = 0
    end
   end
  end
  if view == 'points' or view == 'counts' then return out end
  if view == 'list' then
    -- per listed member: its composite at S ("" absent), ahead
    for i = 1, #listed do
      local m = listed[i]
      local c = comp_of(S[1], lseq[m], lold[m], redis.call('ZSCORE', zl, m))
      if c then
        out[#out + 1] = num(c); out[#out + 1] = ahead(c, m)
      else
        out[#out + 1] = ''; out[#out + 1] = 0
      end
    end
    return out
  end
  local margin = 2 * k + 2
  local lo, hi = 0, -1
  if view == 'range' then
    local f, n = tonumber(ARGV[7]), tonumber(ARGV[8])
    lo, hi = math.max(0, f - margin), f + n - 1 + margin
  elseif view == 'near' then
    -- the members ahead of the bound at S are within k of those now: the
    -- rows R either side of that count at S, widened by the margin
    local p, r = bound_count(bounds[1]), tonumber(ARGV[8])
    lo, hi = math.max(0, p - k - r - margin), p + k + r + margin
  else
    local c, r = comp_at(S[1]), tonumber(ARGV[8])
    if c then
      local p = ahead(c, ARGV[7])
      local eq = redis.call('ZCOUNT', zl, num(c), num(c))
      lo, hi = math.max(0, p - r - 2 * margin), p + eq + r + 2 * margin
    end
  end
  out[#out + 1] = lo
  if hi >= lo then
    local rows
    if desc then rows = redis.call('ZRANGE', zl, lo, hi, 'REV', 'WITHSCORES')
    else rows = redis.call('ZRANGE', zl, lo, hi, 'WITHSCORES') end
    for i = 1, #rows do out[#out + 1] = rows[i] end
  end
  return out
end
return redis.error_reply('read.lua: unknown kind ' .. tostring(kind))
