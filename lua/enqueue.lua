-- enqueue.lua - queues one write of a write_mode = queued board
-- (docs/queued.md): decides duplicate, blocked and full and adds the entry
-- in one step, so a full queue queues nothing and a retried req is queued
-- once. Every key shares the board's hash tag {B|}.
--
-- KEYS[1] rc:{B|}:in          the stream of unapplied writes
-- KEYS[2] rc:{B|}:req:REQ     the req's idempotency record, the same key the
--                             write script keeps (unused when ARGV[2] is "")
-- KEYS[3] rc:{B|}:blocked     members an admin blocked from writing
--
-- ARGV[1] queue_max          ARGV[2] req or ""
-- ARGV[3] idempotency window, seconds
-- ARGV[4] the consumer group (created with the stream)
-- ARGV[5] member
-- ARGV[6] "1": no new record: the writer is at its cap
--         (idempotency_max_per_key), so only a req with a record already is
--         answered (duplicate); else "0"
-- ARGV[7 ...] the entry: field, value pairs (core/rc_queue.h)
--
-- Reply:
--   { "ok", ENTRY-ID, LENGTH }        queued; LENGTH unapplied entries now
--   { "duplicate", ENTRY-ID, MEMBER } the req was queued before (nothing added)
--   { "full", LENGTH }                queue_max unapplied entries: nothing added
--   { "forbidden" }                   the member is blocked: nothing added
--   { "no_record" }                   no new record (ARGV[6] "1") and the req
--                                     has none (or there is no req): nothing
--                                     added (the gateway answers rate_limited)
--
-- Applied entries leave the stream (lua/queue_ack.lua), so XLEN counts the
-- unapplied ones (and those being applied right now).
--
-- One record per write: a queued write with a req makes its record here in
-- the queued state "#ENTRY-ID\nMEMBER" ('#' starts no member), expiring
-- after the window; lua/write.lua, applying the entry, turns that same key
-- into the applied record "MEMBER...\n#ENTRY-ID" ("Idempotency records"
-- there). A retried req finds either and is answered with its entry; a
-- record without "#" (the queued one expired before its entry was applied,
-- so the write made its own) answers entry "".

local stream, marker, blocked = KEYS[1], KEYS[2], KEYS[3]
local max = tonumber(ARGV[1])
local req, window, group, member = ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local no_new_record = ARGV[6] == '1'

if req ~= '' then
  local prior = redis.call('GET', marker)
  if prior then
    local id = string.match(prior, '#([^\n]*)') or ''
    local m = string.match(prior, '^#[^\n]*\n([^\n]*)') or string.match(prior, '^[^\n]*')
    if m == '' then m = member end
    return { 'duplicate', id, m }
  end
end
-- every queued write makes a record (its req's, or the consumer's "q ID"):
-- a writer at its cap may only settle a req it made before
if no_new_record then return { 'no_record' } end
if redis.call('SISMEMBER', blocked, member) == 1 then return { 'forbidden' } end
local len = redis.call('XLEN', stream)
if len >= max then return { 'full', len } end
if len == 0 and redis.call('EXISTS', stream) == 0 then
  redis.call('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM')
end
local id = redis.call('XADD', stream, '*', unpack(ARGV, 7))
if req ~= '' then redis.call('SET', marker, '#' .. id .. '\n' .. member, 'EX', window) end
return { 'ok', id, len + 1 }
