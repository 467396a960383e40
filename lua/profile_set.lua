-- profile_set.lua - replaces a member's profile (display data) atomically:
-- the old hash goes, the new fields go in, in one step. A script rather
-- than MULTI/DEL/HSET/EXEC: on a Redis Cluster a command redirected by MOVED
-- or ASK is sent again whole, which a transaction split over four commands
-- cannot be.
--
-- KEYS[1] rc:profile:MEMBER
-- ARGV    field, value, field, value, ... (none: the profile is removed)
--
-- Reply: the number of fields stored.

redis.call('DEL', KEYS[1])
if #ARGV > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV))
end
return #ARGV / 2
