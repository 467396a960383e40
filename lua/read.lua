-- read.lua - one consistent read of a board: its version, its size and a run
-- of rows, all from the same snapshot (a script runs atomically), so a window
-- is always labelled with the seq it reflects.
--
-- KEYS[1] rc:{B|P}:z     sorted set
-- KEYS[2] rc:{B|P}:seq   board version
-- KEYS[3] rc:{B|P}:log   change log (kind "log" only)
--
-- ARGV[1] kind: range | around | rank | log
-- ARGV[2] order: desc | asc
-- range:  ARGV[3] first index (0-based), ARGV[4] last index (inclusive)
-- around: ARGV[3] member, ARGV[4] radius
-- rank:   ARGV[3] member
-- log:    (nothing) the whole capped log
--
-- Reply: { seq, total, first_rank, m1, c1, m2, c2, ... }
--   first_rank  1-based rank of m1 (range: first index + 1; around: rank of
--               the first row; 0 when the around/rank member is absent)
--   ci          composite scores as strings
-- rank reply:  { seq, total, rank (0 absent), member, composite or "" }
-- log reply:   { seq, total, 0, event1, event2, ... } (JSON texts, oldest first)

local z, seqkey, logkey = KEYS[1], KEYS[2], KEYS[3]
local kind, desc = ARGV[1], ARGV[2] == 'desc'
local seq = tonumber(redis.call('GET', seqkey) or '0')
local total = redis.call('ZCARD', z)

local function rank0(m)
  if desc then return redis.call('ZREVRANK', z, m) end
  return redis.call('ZRANK', z, m)
end

local function rows(first, last, out)
  local r
  if desc then
    r = redis.call('ZRANGE', z, first, last, 'REV', 'WITHSCORES')
  else
    r = redis.call('ZRANGE', z, first, last, 'WITHSCORES')
  end
  for i = 1, #r do out[#out + 1] = r[i] end
  return out
end

if kind == 'range' then
  local first, last = tonumber(ARGV[3]), tonumber(ARGV[4])
  return rows(first, last, { seq, total, first + 1 })
elseif kind == 'around' then
  local r = rank0(ARGV[3])
  if not r then return { seq, total, 0 } end
  local radius = tonumber(ARGV[4])
  local first = r - radius
  if first < 0 then first = 0 end
  return rows(first, r + radius, { seq, total, first + 1 })
elseif kind == 'rank' then
  local r = rank0(ARGV[3])
  if not r then return { seq, total, 0, ARGV[3], '' } end
  return { seq, total, r + 1, ARGV[3], redis.call('ZSCORE', z, ARGV[3]) }
elseif kind == 'log' then
  local out = { seq, total, 0 }
  local entries = redis.call('LRANGE', logkey, 0, -1)
  for i = 1, #entries do out[#out + 1] = entries[i] end
  return out
end
return redis.error_reply('read.lua: unknown kind ' .. tostring(kind))
