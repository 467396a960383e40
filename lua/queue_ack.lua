-- queue_ack.lua - entries of a queued board's stream that were applied
-- (their write script answered) leave it: XACK in the consumer group and
-- XDEL, together, so the stream holds exactly the unapplied entries
-- (docs/queued.md).
--
-- KEYS[1] rc:{B|}:in    the stream
-- ARGV[1] the consumer group; ARGV[2 ...] entry ids
--
-- Reply: the number of entries deleted.

local stream, group = KEYS[1], ARGV[1]
if #ARGV < 2 then return 0 end
redis.call('XACK', stream, group, unpack(ARGV, 2))
return redis.call('XDEL', stream, unpack(ARGV, 2))
