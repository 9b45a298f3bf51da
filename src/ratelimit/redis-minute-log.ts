/**
 * The minute log's searches, a part of the Redis store's script (./redis-script.ts), which puts them in
 * its text: they read the call's keys and state as the script declares them before (LOG, mfirst,
 * mbase, mlast, mhead), and mirror ./minute-log.ts's `minuteAfter` and `minuteRequestAt`.
 */
export const MINUTE_LOG_FUNCTIONS = `
-- minuteAfter: the first pair of the minute log after cutoff (its index in the list, whose head may
-- still hold mhead pairs that left), its instant and its running count before; nil when every pair is
-- at or before it. The oldest pair and the next first, in one read: a busy caller's pairs leave one
-- by one, as they come. Then from there by doubling steps, then halving.
local function firstLive(cutoff)
  if mfirst == 0 or mlast <= cutoff then return nil end
  if mfirst > cutoff then return mhead, mfirst, mbase end
  -- The oldest pair has left, the newest has not: there is a next pair.
  local out = mhead
  local head = redis.call('LRANGE', LOG, 2 * out, 2 * out + 3)
  if tonumber(head[1]) ~= mfirst then
    -- The oldest is not where mhead says: a script from before mhead cut the list's head (its first
    -- pair, then, is the oldest, which has left).
    out = 0
  elseif tonumber(head[3]) > cutoff then
    return out + 1, tonumber(head[3]), tonumber(head[4])
  else
    out = out + 1
  end
  -- Pair out is at or before the cutoff, pair live after it (the newest is).
  local step, live = 1, redis.call('LLEN', LOG) / 2 - 1
  while out + step < live do
    if tonumber(redis.call('LINDEX', LOG, 2 * (out + step))) > cutoff then
      live = out + step
      break
    end
    out, step = out + step, step * 2
  end
  while live - out > 1 do
    local middle = math.floor((out + live) / 2)
    if tonumber(redis.call('LINDEX', LOG, 2 * middle)) > cutoff then live = middle else out = middle end
  end
  local pair = redis.call('LRANGE', LOG, 2 * live, 2 * live + 1)
  return live, tonumber(pair[1]), tonumber(pair[2])
end

-- minuteRequestAt: the instant of the request j places after the oldest counted one (its instant
-- firstAt, the running count before it, base); j is below what the log counts. The pairs that left
-- count fewer before them than base, so the search may start at the list's head.
local function requestAt(j, firstAt, base)
  if j == 0 then return firstAt end
  local wanted = base + j
  local low, high = 0, redis.call('LLEN', LOG) / 2 - 1
  while low < high do
    local middle = math.floor((low + high + 1) / 2)
    if tonumber(redis.call('LINDEX', LOG, 2 * middle + 1)) <= wanted then low = middle else high = middle - 1 end
  end
  return tonumber(redis.call('LINDEX', LOG, 2 * low))
end
`;
