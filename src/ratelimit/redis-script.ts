import { MINUTE_LOG_FUNCTIONS } from './redis-minute-log.js';
import { STAMP_FUNCTION } from './redis-stamp.js';
import { LIMITER_STATE_FIELDS, LIMITER_STATE_FIELDS_BEFORE_WAITS } from './redis-state.js';
import { IN_FLIGHT_MS } from '../http/in-flight.js';
import { DAY_MS, MINUTE_MS } from './state.js';

/**
 * How long a caller's minute log may outlive its newest entry in Redis:
 * its lifetime is set once in this long, not at every admission.
 */
export const LOG_SLACK_MS = 5_000;

/**
 * How many pairs that left the minute may stay at its list's head before they
 * are cut off in one go (as ./minute-log.ts keeps a buffer's forgotten start).
 */
export const LOG_DEAD_PAIRS = 64;

/**
 * The Redis store's only script, so that every call is atomic and a request costs at most one round
 * trip. One run decides one or several calls, each in turn as if alone (./redis-store.ts sends the
 * calls of one event-loop turn together), and a run is atomic as a whole. The script is a deliberate
 * mirror of ./decision.ts and of the window arithmetic of ./verdict.ts, step by step (the names in the
 * comments point there): the shared vectors (test/ratelimit/vectors.json) and the differential test
 * (test/ratelimit/redis-differential.test.ts) hold the two equal. The window lengths come from
 * ./state.ts, written in once when this module loads, so the SHA stays the same. The script only
 * counts; every verdict shape is built by the core from its numbers (see ./redis-store.ts).
 *
 * KEYS, four per call: the caller's minute log (a LIST of pairs, oldest first: an instant that admitted
 *       requests and the running count before its first, one pair per millisecond, as ./minute-log.ts),
 *       rejections (LIST of instants, oldest first) and the rest of its state (a STRING, the fields of
 *       LIMITER_STATE_FIELDS packed as doubles: day, count, until, level, lastEnd, seq; rejEnd, when the
 *       newest rejection leaves its window, 0 when none is kept; exp, the state's own expiry on Redis's
 *       clock; the minute log's mtot, the running count after its newest pair, mbase, the running count
 *       before its oldest, mfirst and mlast, its oldest and newest instants, 0 when it is empty; mhead,
 *       how many pairs that left the minute still lie before its oldest at the list's head, as
 *       ./minute-log.ts's `start`; wend, when the latest 429's wait ends, and rreal, rconn, rmark, the 429
 *       the in-flight allowance runs from: its real instant, its connection and the newest connection then,
 *       as ./state.ts's waitEnd and refused*). The state spares a call reading the lists: an admission with nothing
 *       to forget runs GET and SET, and in a millisecond of its own RPUSH (and TIME, once per run);
 *       forgetting the oldest pair, as a busy caller does at nearly every admission, reads it and the
 *       next (one LRANGE) and moves mhead; the pairs that left are cut off LOG_DEAD_PAIRS at a time
 *       (LTRIM). Forgetting more finds where to cut by doubling steps from the oldest, so a call pays
 *       for what leaves, not for what the log holds. Fourth, its stamp (./redis-stamp.ts). Redis
 *       6.2 or newer (SET's PXAT). Lua numbers are doubles, exact for ms instants.
 * ARGV: the ban rules (rejections, withinMs, firstBanMs, maxBanMs, escalationWindowMs), then ten per
 *       call: mode (hit | refuse | peek | ban | unban), now in ms ('' = Redis TIME, '+<ms>' = Redis TIME
 *       moved: a test key's clock), perMinute, perDay, unbanSeq, bans (0: the policy's refusals never
 *       ban), the real instant ('' = Redis TIME), and the request's connection, the newest connection of
 *       its instance and how long its connection has been open (ms), for the in-flight allowance
 *       (../http/in-flight.ts; connection 0: none known).
 * The reply holds one reply per call, in order. refuse is hit without admission (decide's `forced`).
 * hit, refuse and peek reply {kind, now, minute remaining, resetAt, nextAdmitInMs, day remaining, resetAt,
 * nextAdmitInMs, bannedUntil or 0, end of the ban this request started or 0, bindingUntil when banned,
 * else 0, when the minute's oldest counted request leaves or 0, and for an admission or a peek the
 * caller's stamp (./redis-stamp.ts)}; ban replies {bannedUntil or 0, level}; unban, nothing.
 */
export const LIMITER_SCRIPT = `
local MINUTE, DAY = ${MINUTE_MS}, ${DAY_MS}
local threshold, within, firstBan, maxBan, escalation =
  tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local FIELDS = { ${LIMITER_STATE_FIELDS.map((field) => `'${field}'`).join(', ')} }
-- The state is one string, its fields packed as doubles in that order: a GET and a SET, where a hash
-- of as many fields cost Redis more to read and write (struct is a library Redis gives scripts).
local FORMAT = '<' .. string.rep('d', #FIELDS)
-- The state as it was packed before the ban rule's wait joined it: read once, as if no 429 were waited on.
local BEFORE_WAITS = ${LIMITER_STATE_FIELDS_BEFORE_WAITS}
local FORMAT_BEFORE_WAITS = '<' .. string.rep('d', BEFORE_WAITS)
-- The in-flight allowance (../http/in-flight.ts): how long after an answer a request may have been in flight.
local IN_FLIGHT = ${IN_FLIGHT_MS}
local INSTANCE_SPAN = 2 ^ 32
-- How long the minute log may outlive its newest entry, so that its lifetime is set once in a while
-- rather than at every admission (what the windows hold is the rule, not how long the key outlives it:
-- docs/rate-limits.md#windows).
local LOG_SLACK = ${LOG_SLACK_MS}
-- How many pairs that left may stay at the list's head: cut off together, not one LTRIM per admission.
local DEAD_PAIRS = ${LOG_DEAD_PAIRS}

-- Redis's clock, read once per run: every call of a run is decided at the same instant.
local timeNow
local function redisNow()
  if not timeNow then
    local t = redis.call('TIME')
    timeNow = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return timeNow
end

-- A call's given now: an instant, or Redis's clock moved by '+<ms>' (a test key's clock).
local function nowOf(arg)
  return string.sub(arg, 1, 1) == '+' and redisNow() + tonumber(string.sub(arg, 2)) or tonumber(arg)
end

-- The call being decided, set by the loop at the end for each call in turn: its keys and arguments
-- (injected: the caller gave now), its state as read (stored, packed, its exp), and its fields.
local LOG, REJ, STATE, STAMP, mode, injected, now, perMinute, perDay, signal, stored, storedExp
local day, count, banned, level, lastEnd, seq, rejEnd, mtot, mbase, mfirst, mlast, lexp, mhead
local wend, rreal, rconn, rmark, bans, real, conn, mark, opened

local function newest(key)
  return tonumber(redis.call('LINDEX', key, -1))
end

-- How many entries of the rejections list, from the oldest, are at or before cutoff (logAfter).
local function olderCount(key, len, cutoff)
  local n = 0
  while n < len and tonumber(redis.call('LINDEX', key, n)) <= cutoff do n = n + 1 end
  return n
end

${MINUTE_LOG_FUNCTIONS}
-- How much room each window has, with counted requests in the minute (minuteStatus and dayStatus).
local function room(counted)
  local today = math.floor(now / DAY)
  return math.max(0, perMinute - counted), math.max(0, perDay - (day == today and count or 0))
end

-- assess: minuteStatus and dayStatus. counted: what the pruned log holds, when the caller pruned it;
-- else (peek) what is live is found without forgetting anything.
local function assess(counted)
  local oldest, base = mfirst, mbase
  if not counted then
    local first
    first, oldest, base = firstLive(now - MINUTE)
    counted = first and mtot - base or 0
  end
  local last = mlast > 0 and mlast or nil
  -- The request whose leaving lets one more in (none when the limit is 0: nothing ever does).
  local blocking = counted >= perMinute and perMinute > 0 and requestAt(counted - perMinute, oldest, base)
  local minuteLeft, dayLeft = room(counted)
  local dayReset = (math.floor(now / DAY) + 1) * DAY
  -- windowMs of minuteStatus: when the oldest counted request leaves.
  local oldestLeaves = counted > 0 and oldest + MINUTE or 0
  return {
    minuteLeft,
    last and math.max(now, last + MINUTE) or now,
    blocking and math.max(0, blocking + MINUTE - now) or 0,
    dayLeft, dayReset, dayLeft > 0 and 0 or dayReset - now, oldestLeaves }
end

local function reply(kind, a, bannedUntil, banStarted, binding, stamp)
  return { kind, now, a[1], a[2], a[3], a[4], a[5], a[6], bannedUntil, banStarted, binding or 0, a[7], stamp }
end

-- bindingUntil (verdict.ts), on the pruned log of counted requests.
local function bindingUntil(a, counted)
  if a[1] >= a[4] then return a[5] end
  local k = perMinute - a[4]
  if k < 0 then return a[5] end
  return math.min(a[5], requestAt(counted - 1 - k, mfirst, mbase) + MINUTE)
end

-- A key lives until what it holds behaves like no state at all (state.ts isFresh), and no longer.
-- PEXPIRE is relative, so an injected clock far from Redis's own still gives the right lifetimes.
local function expire(key, at)
  if at > now then redis.call('PEXPIRE', key, at - now) else redis.call('DEL', key) end
end

-- pushed: an admission in a millisecond of its own, the one change that moves the log's end, so the
-- one that sets its lifetime (pruning takes from the other end; a refusal would set the same instant
-- again, and with a test's clock that jumps ahead, a shorter lifetime on Redis's clock than the
-- entries have on the test's). rejTouched: the rejections list changed, so its lifetime is set again
-- (an admission leaves it, and its end, as they were).
local function save(pushed, rejTouched)
  local logEnd = mlast > 0 and mlast + MINUTE or 0
  -- The state outlives both lists: its seq must stay while anything an unban signal clears remains.
  -- The log's lifetime moves only once it would end before its newest entry leaves.
  local logExpires = pushed and lexp < logEnd
  if logExpires then lexp = logEnd + LOG_SLACK end
  local stateEnd = math.max(logEnd, lexp, rejEnd, count > 0 and (day + 1) * DAY or 0, banned,
    level > 0 and lastEnd + escalation or 0, wend)
  -- An empty list is no key at all (Redis deletes it): nothing to expire or delete.
  if logExpires then expire(LOG, lexp) end
  if rejTouched and rejEnd > 0 then expire(REJ, rejEnd) end
  if stateEnd <= now then
    redis.call('DEL', STATE)
    return
  end
  -- exp: the state's expiry as an instant of Redis's clock, kept so that it is set only when it moves
  -- (once a day for a caller with a count today). An injected clock's instants are moved onto Redis's.
  local offset = injected and redisNow() - now or 0
  local exp = stateEnd + offset
  local packed = struct.pack(FORMAT, day, count, banned, level, lastEnd, seq, rejEnd, exp, mtot, mbase, mfirst, mlast,
    lexp, mhead, wend, rreal, rconn, rmark)
  if packed == stored then return end
  if stored and exp == storedExp then
    redis.call('SET', STATE, packed, 'KEEPTTL')
  else
    redis.call('SET', STATE, packed, 'PXAT', exp)
  end
end

-- The caller's state into the fields. A state kept as a hash, by the scripts before the packed one
-- (their HMGET of the same names), carries over: a service upgraded across the change keeps every
-- caller's counts, bans and levels; its list's head was its oldest pair (mhead 0).
local function readState()
  stored = redis.pcall('GET', STATE)
  if type(stored) == 'string' then
    if #stored == 8 * BEFORE_WAITS then
      day, count, banned, level, lastEnd, seq, rejEnd, storedExp, mtot, mbase, mfirst, mlast, lexp, mhead =
        struct.unpack(FORMAT_BEFORE_WAITS, stored)
      wend, rreal, rconn, rmark = 0, 0, 0, 0
    else
      day, count, banned, level, lastEnd, seq, rejEnd, storedExp, mtot, mbase, mfirst, mlast, lexp, mhead,
        wend, rreal, rconn, rmark = struct.unpack(FORMAT, stored)
    end
    return
  end
  local s = stored and redis.call('HMGET', STATE, unpack(FIELDS)) or {}
  stored = nil
  day, count, banned = tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0
  level, lastEnd, seq = tonumber(s[4]) or 0, tonumber(s[5]) or 0, tonumber(s[6]) or 0
  mtot, mbase = tonumber(s[9]) or 0, tonumber(s[10]) or 0
  mfirst, mlast, lexp, mhead = tonumber(s[11]) or 0, tonumber(s[12]) or 0, tonumber(s[13]) or 0, 0
  wend, rreal, rconn, rmark = tonumber(s[15]) or 0, tonumber(s[16]) or 0, tonumber(s[17]) or 0, tonumber(s[18]) or 0
  -- When the newest rejection leaves its window: the rejections list's end, kept in the state so that
  -- an admission need not read the list (read once where the state lacks it: a new caller).
  rejEnd = tonumber(s[7])
  if not rejEnd then
    local last = newest(REJ)
    rejEnd = last and last + within or 0
  end
end

-- The rejections list forgotten, and no 429 waited on (a ban starts, an unban: NO_WAIT of ./decision.ts).
local function clearRejections()
  redis.call('DEL', REJ)
  rejEnd = 0
  wend, rreal, rconn, rmark = 0, 0, 0, 0
end

-- inFlight (../http/in-flight.ts): whether this request may have been sent before its caller could read
-- the 429 the allowance runs from.
local function inFlight()
  if conn == 0 or rconn == 0 or conn == rconn or real - rreal > IN_FLIGHT then return false end
  if math.floor(conn / INSTANCE_SPAN) == math.floor(rmark / INSTANCE_SPAN) then return conn <= rmark end
  return opened < rreal
end
${STAMP_FUNCTION}
-- One call, decided on the state read for it: its reply, or nil for a mode it does not know.
local function decide()
  if mode == 'hit' or mode == 'refuse' then
    -- pruneState
    local first, oldest, base = firstLive(now - MINUTE)
    if not first then
      if mfirst ~= 0 then redis.call('DEL', LOG) end
      mtot, mbase, mfirst, mlast, lexp, mhead = 0, 0, 0, 0, 0, 0
    elseif oldest ~= mfirst then
      mfirst, mbase, mhead = oldest, base, first
      if mhead >= DEAD_PAIRS then
        redis.call('LTRIM', LOG, 2 * mhead, -1)
        mhead = 0
      end
    end
    local counted = mtot - mbase
    local today = math.floor(now / DAY)
    if day ~= today then count = 0 end
    day = today
    if banned <= now then banned = 0 end
    if now - lastEnd >= escalation then level, lastEnd = 0, 0 end
    if wend <= now then wend, rreal, rconn, rmark = 0, 0, 0, 0 end
    -- withUnbanSignal
    if signal > seq then
      banned, seq = 0, signal
      if rejEnd > 0 then clearRejections() end
      wend, rreal, rconn, rmark = 0, 0, 0, 0
    end
    -- decide
    if banned > now then
      local a = assess(counted)
      save()
      return reply('banned', a, banned, 0, bindingUntil(a, counted))
    end
    local minuteLeft, dayLeft = room(counted)
    if mode == 'hit' and minuteLeft > 0 and dayLeft > 0 then
      -- minuteAppend: a request in the newest pair's millisecond only counts.
      local pushed = mlast ~= now
      if pushed then
        redis.call('RPUSH', LOG, now, mtot)
        if mfirst == 0 then mfirst, mbase, mhead = now, mtot, 0 end
        mlast = now
      end
      mtot, count = mtot + 1, count + 1
      save(pushed)
      return reply('admitted', assess(counted + 1), 0, 0, 0, stamp())
    end
    local a = assess(counted)
    -- refuse: the 429's wait (rateLimited's Retry-After: the longer window's, at least a second), and
    -- whether it counts toward a ban: sent before the previous 429's wait ended, and not in flight.
    if bans == 0 then
      save()
      return reply('rate-limited', a, 0, 0)
    end
    local forgiven = inFlight()
    local early = now < wend
    wend = now + 1000 * math.max(1, math.ceil(math.max(a[3], a[6]) / 1000))
    if not forgiven then rreal, rconn, rmark = real, conn, mark end
    if forgiven or not early then
      save()
      return reply('rate-limited', a, 0, 0)
    end
    -- startBan, on the rejections of the window (at most the threshold's newest); an
    -- admission leaves the list as it is, since only a refusal counts it
    if rejEnd > 0 then
      local len = redis.call('LLEN', REJ)
      local old = math.max(olderCount(REJ, len, now - within), len - threshold)
      if old > 0 then redis.call('LTRIM', REJ, old, -1) end
    end
    local started = 0
    if redis.call('RPUSH', REJ, now) >= threshold then
      level = level + 1
      banned = now + math.min(firstBan * 2 ^ (level - 1), maxBan)
      lastEnd, started = banned, banned
      clearRejections()
    else
      rejEnd = now + within
    end
    save(false, true)
    return reply('rate-limited', a, 0, started)
  elseif mode == 'peek' then
    -- peek applies the unban signal in thought only: it writes nothing.
    if signal > seq then banned = 0 end
    return reply('peek', assess(), banned > now and banned or 0, 0, 0, stamp())
  elseif mode == 'ban' then
    -- A pending unban signal shows as applied, as in peek.
    if signal > seq then banned = 0 end
    return { banned > now and banned or 0, level }
  elseif mode == 'unban' then
    -- unban: like the memory store, a caller without state stays without.
    if redis.call('EXISTS', STATE) == 1 then
      banned = 0
      clearRejections()
      save()
    end
    return {}
  end
  return nil
end

-- Each call in turn, as if each were a run of its own: KEYS holds 4 per call, ARGV 10 per call after the rules.
local replies = {}
for i = 1, #KEYS / 4 do
  local k, a = 4 * (i - 1), 5 + 10 * (i - 1)
  LOG, REJ, STATE, STAMP = KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4]
  mode, injected = ARGV[a + 1], ARGV[a + 2] ~= ''
  now = injected and nowOf(ARGV[a + 2]) or redisNow()
  perMinute, perDay, signal = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
  bans, real = tonumber(ARGV[a + 6]), ARGV[a + 7] == '' and redisNow() or tonumber(ARGV[a + 7])
  conn, mark = tonumber(ARGV[a + 8]), tonumber(ARGV[a + 9])
  opened = real - tonumber(ARGV[a + 10])
  readState()
  replies[i] = decide()
  if not replies[i] then return redis.error_reply('unknown mode ' .. tostring(mode)) end
end
return replies
`;
