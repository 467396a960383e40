-- lock_release.lua - the owner of a lock gives it up; anyone else changes
-- nothing. A compare-and-DEL: a plain DEL could drop a lock another gateway
-- took after ours expired.
--
-- KEYS[1] the lock (e.g. rc:{B|}:lock of a hot board)
-- ARGV[1] the caller's token
--
-- Reply: 1 when the caller held the lock (now deleted), 0 when it did not.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
