/**
 * A caller's stamp (`Verdict.stamp`): a token in Redis beside the caller's limiter state, renewed by
 * every committed change of what memory holds of the caller (`RedisLimiterStore.restamp`, a random one)
 * and read by the limiter's script at each admission and peek, in the round trip the request makes
 * anyway. orders/order-pages.ts says what it guards.
 */

/** How long a stamp outlives its last change: one that expired is made anew, which only costs the pages it guarded. */
export const STAMP_TTL_MS = 86_400_000;

/**
 * The script's reading of the stamp (./redis-script.ts puts it in its text; STAMP and mode are the
 * call's, as it declares them). A caller without one (new, expired, or a Redis that restarted empty) is
 * given one made of Redis's clock, which no earlier stamp of the caller's can equal since the clock has
 * moved on; a peek, which never writes, reads none.
 */
export const STAMP_FUNCTION = `
local function stamp()
  local s = redis.call('GET', STAMP)
  if s or mode == 'peek' then return s end
  local t = redis.call('TIME')
  s = 't' .. t[1] .. '.' .. t[2]
  redis.call('SET', STAMP, s, 'PX', ${STAMP_TTL_MS})
  return s
end
`;
