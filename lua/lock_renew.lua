-- lock_renew.lua - the owner of a lock extends it; anyone else changes nothing.
-- A compare-and-PEXPIRE: a plain PEXPIRE could extend a lock another gateway
-- took after ours expired.
--
-- KEYS[1] the lock (e.g. rc:{B|}:lock of a hot board)
-- ARGV[1] the caller's token     ARGV[2] the new TTL, ms
--
-- Reply: 1 when the caller holds the lock (now renewed), 0 when it does not.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
