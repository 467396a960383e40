-- scale.lua - the scale schedule of a decay = scale board: multiplies every
-- score of the board by the factor once per period, however many gateways
-- call it (the schedule lives in Redis, checked and moved atomically here).
--
-- The schedule starts at the first call (scaled_at is set to now, nothing is
-- scaled). From then on k = floor((now - scaled_at) / every) periods are due;
-- when k >= 1 the board is multiplied by factor^k in one ZUNIONSTORE (a
-- schedule missed while every gateway was down is caught up in one step),
-- seq is bumped, and scaled_at moves on by k * every (not to now, so the
-- phase never drifts). Same rule as core/rc_decay.c, rc_decay_scale_due.
-- Time comes from the gateway (ARGV), never from Redis' clock.
--
-- KEYS[1] rc:{B|}:z          the board
-- KEYS[2] rc:{B|}:scaled_at  when the schedule last moved (ms since the epoch)
-- KEYS[3] rc:{B|}:seq        board version
--
-- ARGV[1] now, ms since the epoch
-- ARGV[2] scale_every, ms
-- ARGV[3] scale_factor (0 < f < 1)
--
-- Reply: { k, scaled_at } - the periods applied by this call (0: none due,
-- or the schedule just started) and scaled_at afterwards (ms).

local z, atkey, seqkey = KEYS[1], KEYS[2], KEYS[3]
local now, every, factor = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if not now or not every or every <= 0 or not factor or factor <= 0 or factor >= 1 then
  return redis.error_reply('ERR scale.lua: bad now, every or factor')
end

local last = tonumber(redis.call('GET', atkey) or '')
if not last then
  redis.call('SET', atkey, string.format('%.17g', now))
  return { 0, now }
end
if now < last + every then return { 0, last } end

local k = math.floor((now - last) / every)
if redis.call('EXISTS', z) == 1 then
  -- the old set is replaced: conf/redis.conf's lazyfree-lazy-server-del frees
  -- it off the main thread (the union itself is O(N log N) on it)
  redis.call('ZUNIONSTORE', z, 1, z, 'WEIGHTS', string.format('%.17g', factor ^ k))
  redis.call('INCR', seqkey)
end
local at = last + k * every
redis.call('SET', atkey, string.format('%.17g', at))
return { k, at }
