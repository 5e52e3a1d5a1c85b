import { LuaScript } from '../../shared/redis/redis-script.ts';

// Redis's own clock decides expiry, so the expiring index and the key TTLs agree even when the
// clocks of the ingest hosts drift.
const NOW_MS = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end`;

// A session lives retention_ms after its last change (the ended and the idle retention are chosen by
// the caller); its room pointers (the room's and the tenant's room's) go with it unless a newer
// session of the room took a pointer over. The expiring index lets list() drop it from the user's index.
const RETAIN = `
local function retain(session_key, room_keys, expiring_key, id, retention_ms)
  local expire_at = string.format('%d', now_ms() + tonumber(retention_ms))
  redis.call('PEXPIREAT', session_key, expire_at)
  for i = 1, #room_keys do
    if redis.call('HGET', room_keys[i], 'id') == id then redis.call('PEXPIREAT', room_keys[i], expire_at) end
  end
  redis.call('ZADD', expiring_key, expire_at, id)
  return expire_at
end

-- A key that names several sessions expires after the last of them, never before.
local function outlive(key, expire_at)
  local ttl = redis.call('PTTL', key)
  if ttl == -2 or (ttl >= 0 and now_ms() + ttl >= tonumber(expire_at)) then return end
  redis.call('PEXPIREAT', key, expire_at)
end`;

// A session restored from the history can be older than the room's latest: it must not take over.
const POINT = `
local function point(room_key, id, created_at)
  local latest = redis.call('HGET', room_key, 'created_at')
  if not latest or tonumber(created_at) >= tonumber(latest) then
    redis.call('HSET', room_key, 'id', id, 'created_at', created_at)
    redis.call('PERSIST', room_key)
  end
end`;

// Sorted-set members cannot expire: drop from the user's index the sessions whose hash has expired.
// Bounded per call so that a script never blocks the server for long.
const PRUNE = `
local function prune(index_key, expiring_key)
  local gone = redis.call('ZRANGEBYSCORE', expiring_key, '-inf', string.format('%d', now_ms()), 'LIMIT', 0, 1000)
  for i = 1, #gone do
    redis.call('ZREM', index_key, gone[i])
    redis.call('ZREM', expiring_key, gone[i])
  end
end`;

/**
 * KEYS session, room, tenant's room, user index, user expiring, room's tenants; ARGV id, version,
 * json, created_at, retention_ms, user_id. 1, or 0 if the id exists.
 */
export const createSessionScript = new LuaScript(
  'createSession',
  6,
  `${NOW_MS}${RETAIN}${PRUNE}${POINT}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
prune(KEYS[4], KEYS[5])
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'session', ARGV[3])
point(KEYS[2], ARGV[1], ARGV[4])
point(KEYS[3], ARGV[1], ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1])
redis.call('HSET', KEYS[6], ARGV[6], redis.call('HGET', KEYS[3], 'id'))
outlive(KEYS[6], retain(KEYS[1], { KEYS[2], KEYS[3] }, KEYS[5], ARGV[1], ARGV[5]))
return 1`,
);

/**
 * KEYS session, room, tenant's room, user expiring, room's tenants; ARGV id, expected version, next
 * version, json, retention_ms. 1, 0 on a version mismatch, -1 if gone.
 */
export const updateSessionScript = new LuaScript(
  'updateSession',
  5,
  `${NOW_MS}${RETAIN}
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return -1 end
if current ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[3], 'session', ARGV[4])
outlive(KEYS[5], retain(KEYS[1], { KEYS[2], KEYS[3] }, KEYS[4], ARGV[1], ARGV[5]))
return 1`,
);

/**
 * KEYS user index, user expiring; ARGV min, max (scores), offset, count, direction ('' for any),
 * session key prefix. { total, ids newest first }. A direction reads each session of the range in
 * the script, so the page and its total agree; the user's range is what it costs.
 */
export const listSessionsScript = new LuaScript(
  'listSessions',
  2,
  `${NOW_MS}${PRUNE}
prune(KEYS[1], KEYS[2])
if ARGV[5] == '' then
  local total = redis.call('ZCOUNT', KEYS[1], ARGV[1], ARGV[2])
  local ids = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[1], 'LIMIT', ARGV[3], ARGV[4])
  return { total, ids }
end
local all = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[1])
local first, last = tonumber(ARGV[3]) + 1, tonumber(ARGV[3]) + tonumber(ARGV[4])
local total, ids = 0, {}
for i = 1, #all do
  local json = redis.call('HGET', ARGV[6] .. all[i], 'session')
  if json and cjson.decode(json).call_direction == ARGV[5] then
    total = total + 1
    if total >= first and total <= last then ids[#ids + 1] = all[i] end
  end
end
return { total, ids }`,
);

/** KEYS lock; ARGV token. Deletes the lock only if this token still holds it: 1, else 0. */
export const releaseLockScript = new LuaScript(
  'releaseRoomLock',
  1,
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
);

/**
 * KEYS tenant's room, room; ARGV user_id, session key prefix. The id the tenant's room points to.
 * A deployment whose sessions were created before rooms were kept per tenant has only the room's
 * pointer: when that names a live session of this tenant, the tenant's pointer is made from it (with
 * the session's remaining lifetime), so those sessions keep answering by room. Else false.
 */
export const tenantRoomScript = new LuaScript(
  'tenantRoom',
  2,
  `
local id = redis.call('HGET', KEYS[1], 'id')
if id then return id end
id = redis.call('HGET', KEYS[2], 'id')
if not id then return false end
local session_key = ARGV[2] .. id
local json = redis.call('HGET', session_key, 'session')
if not json or cjson.decode(json).user_id ~= ARGV[1] then return false end
local ttl = redis.call('PTTL', session_key)
if ttl <= 0 then return false end
redis.call('HSET', KEYS[1], 'id', id, 'created_at', redis.call('HGET', KEYS[2], 'created_at'))
redis.call('PEXPIRE', KEYS[1], ttl)
return id`,
);

/**
 * KEYS room, room's tenants; ARGV session key prefix. The room's latest session of any tenant (false
 * if none), or -1 when the room has live (CREATED or ACTIVE) sessions of more than one tenant: each
 * tenant's latest session, and the room's pointer (sessions created before the tenants were kept).
 * Tenants whose session has expired are dropped from the room's tenants.
 */
export const anyTenantRoomScript = new LuaScript(
  'anyTenantRoom',
  2,
  `
local live, count = {}, 0
local function consider(id)
  local json = redis.call('HGET', ARGV[1] .. id, 'session')
  if not json then return false end
  local session = cjson.decode(json)
  if (session.status == 'CREATED' or session.status == 'ACTIVE') and not live[session.user_id] then
    live[session.user_id] = true
    count = count + 1
  end
  return true
end
local tenants = redis.call('HGETALL', KEYS[2])
for i = 1, #tenants, 2 do
  if not consider(tenants[i + 1]) then redis.call('HDEL', KEYS[2], tenants[i]) end
end
local id = redis.call('HGET', KEYS[1], 'id')
if id then consider(id) end
if count > 1 then return -1 end
return id`,
);
