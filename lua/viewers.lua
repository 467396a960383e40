-- viewers.lua - one gateway's count of open subscriptions to a board, and the
-- sum of every other gateway's (docs/protocol-additions.md, "Viewer counts").
--
-- KEYS[1] rc:{B|}:viewers  hash: field = gateway id, value "COUNT:EXPIRES_MS"
-- ARGV[1] this gateway's id (random per process)
-- ARGV[2] its count now (a non-negative integer; 0 removes its field)
-- ARGV[3] how long the count holds, in ms (a gateway that stops refreshing
--         it, because it died, drops out of the sum after this)
--
-- Reply: the sum of the live counts of the other gateways (integer).
-- Expired fields are deleted on the way; the key expires with its newest
-- field (its TTL is only ever extended), so it goes away by itself when no
-- gateway refreshes it. Times are Redis's own (TIME), so gateways with
-- skewed clocks agree on expiry.
local id, count, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if not count or count < 0 or count ~= math.floor(count) or not ttl or ttl < 1 then
  return redis.error_reply('ERR viewers.lua: bad count or ttl')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local sum, dead = 0, {}
for i = 1, #all, 2 do
  if all[i] ~= id then
    local c, e = string.match(all[i + 1], '^(%d+):(%d+)$')
    if c and tonumber(e) > now then
      sum = sum + tonumber(c)
    else
      dead[#dead + 1] = all[i]
    end
  end
end
if #dead > 0 then
  redis.call('HDEL', KEYS[1], unpack(dead))
end
if count > 0 then
  redis.call('HSET', KEYS[1], id, string.format('%d:%d', count, now + ttl))
  if redis.call('PTTL', KEYS[1]) < ttl then
    redis.call('PEXPIRE', KEYS[1], ttl) -- extended, never shortened: others' fields live on
  end
else
  redis.call('HDEL', KEYS[1], id)
end
return sum
