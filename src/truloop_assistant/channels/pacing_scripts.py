"""The pacer's scripts (``channels.pacing``): one round trip takes a call's slot, another holds a method
back after a 429. Times are µs of Redis's clock, so every process agrees on them."""

# KEYS: 1 the method's calls (a list of µs, newest first), 2 its BULK calls, 3 its hold, 4 its learned
# budget, 5-7 the callers waiting at ranks 0-2 in the order they came (sorted sets by their first ask),
# 8-10 the same callers by the deadline of their note (a caller that lets it pass is gone), 11 growing
# answers by their last update, 12 the same by when they last asked, 13 the channel's sends (or the
# first key again).
# ARGV: 1 budget, 2 rank, 3 caller id, 4 window µs, 5 grace µs, 6 channel budget (0: none), 7 typing
# spare share, 8 whether the caller waits (1/0), 9 how long a growing answer counts after it last asked,
# 10 the longest window any caller counts in (µs; older calls are dropped), 11 whether the caller was
# refused before (1/0: it may be noted as waiting).
# Returns 0 when the call may go now, else -(µs until it should ask again).
TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local said = redis.call('MGET', KEYS[3], KEYS[4])
local budget = math.max(1, math.floor(tonumber(said[2] or ARGV[1])))
local rank, id = tonumber(ARGV[2]), ARGV[3]
local window, grace = tonumber(ARGV[4]), tonumber(ARGV[5])
local horizon = tonumber(ARGV[10])
local since = now - horizon
local cap = math.max(1, math.floor(budget / 2))
local ttl = math.ceil(horizon / 1000) + 1000

local function trim(key)  -- drops the calls past the horizon; how many are left
  while true do
    local last = redis.call('LINDEX', key, -1)
    if not last or tonumber(last) > since then break end
    redis.call('RPOP', key)
  end
  return redis.call('LLEN', key)
end

-- When r + 1 of a list's `size` slots will be free (now, if they are); `count`: its length.
local function slot_at(key, size, count, r)
  if count + r < size then return now end
  local index = size - 1 - r
  if index >= 0 then
    local at = redis.call('LINDEX', key, index)
    if not at then return now end
    return tonumber(at) + window
  end
  local newest = tonumber(redis.call('LINDEX', key, 0) or now)
  return newest + window + math.ceil(-index * window / size)
end

local function waiting(r)  -- callers of rank r still waiting (those whose note lapsed are dropped)
  if redis.call('ZCARD', KEYS[8 + r]) == 0 then return 0 end
  local gone = redis.call('ZRANGEBYSCORE', KEYS[8 + r], '-inf', now)
  if #gone > 0 then
    for _, caller in ipairs(gone) do redis.call('ZREM', KEYS[5 + r], caller) end
    redis.call('ZREMRANGEBYSCORE', KEYS[8 + r], '-inf', now)
  end
  return redis.call('ZCARD', KEYS[5 + r])
end

local function refuse(wake)
  wake = math.max(wake, now + 1000)
  if ARGV[8] == '1' and rank <= 2 then
    local keep = math.ceil((wake + grace - now) / 1000) + 1000
    redis.call('ZADD', KEYS[5 + rank], 'NX', now, id)
    redis.call('ZADD', KEYS[8 + rank], wake + grace, id)
    redis.call('PEXPIRE', KEYS[5 + rank], keep)
    redis.call('PEXPIRE', KEYS[8 + rank], keep)
  end
  return -(wake - now)
end

local hold = tonumber(said[1] or 0)
if hold > now then return refuse(hold) end
local count = trim(KEYS[1])
local before = 0  -- callers of a higher rank waiting
for r = 0, math.min(rank, 3) - 1 do before = before + waiting(r) end
local ahead = 0  -- callers of this rank that came before this one
if rank <= 2 and waiting(rank) > 0 then
  ahead = redis.call('ZRANK', KEYS[5 + rank], id) or redis.call('ZCARD', KEYS[5 + rank])
end

local wake
if rank == 3 then  -- a growing answer: fairness among them, after everyone waiting
  local stale = redis.call('ZRANGEBYSCORE', KEYS[12], '-inf', now - tonumber(ARGV[9]))
  for _, gone in ipairs(stale) do
    redis.call('ZREM', KEYS[11], gone)
    redis.call('ZREM', KEYS[12], gone)
  end
  redis.call('ZADD', KEYS[12], now, id)
  redis.call('ZADD', KEYS[11], 'NX', now, id)
  redis.call('PEXPIRE', KEYS[11], 60000)
  redis.call('PEXPIRE', KEYS[12], 60000)
  wake = slot_at(KEYS[1], budget, count, before + redis.call('ZRANK', KEYS[11], id))
elseif rank == 4 then  -- typing: only from a spare part of the budget
  local spare = math.max(2, math.ceil(budget * tonumber(ARGV[7])))
  wake = slot_at(KEYS[1], budget, count, before + spare - 1)
else
  wake = slot_at(KEYS[1], budget, count, before + ahead)
  if rank == 2 and before > 0 and wake > now then
    -- Others wait: invitations and the like still get up to half of the budget.
    local bulk = trim(KEYS[2])
    wake = math.min(wake, math.max(slot_at(KEYS[1], budget, count, 0), slot_at(KEYS[2], cap, bulk, ahead)))
  end
end
if wake > now then return refuse(wake) end

local scope = tonumber(ARGV[6])
if scope > 0 then
  local sent = trim(KEYS[13])
  local scope_at = slot_at(KEYS[13], scope, sent, 0)
  if scope_at > now then return -(scope_at - now) end
  if redis.call('LPUSH', KEYS[13], now) > scope then redis.call('LTRIM', KEYS[13], 0, scope - 1) end
  redis.call('PEXPIRE', KEYS[13], ttl)
end
if redis.call('LPUSH', KEYS[1], now) > budget then redis.call('LTRIM', KEYS[1], 0, budget - 1) end
redis.call('PEXPIRE', KEYS[1], ttl)
if rank == 2 then
  if redis.call('LPUSH', KEYS[2], now) > cap then redis.call('LTRIM', KEYS[2], 0, cap - 1) end
  redis.call('PEXPIRE', KEYS[2], ttl)
elseif rank == 3 then
  redis.call('ZADD', KEYS[11], now, id)
end
if rank <= 2 and ARGV[11] == '1' then
  redis.call('ZREM', KEYS[5 + rank], id)
  redis.call('ZREM', KEYS[8 + rank], id)
end
return 0
"""

# KEYS: the method's hold. ARGV: the hold asked for (µs). Keeps the later of the two.
HOLD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local until_at = now + tonumber(ARGV[1])
if until_at > tonumber(redis.call('GET', KEYS[1]) or 0) then
  redis.call('SET', KEYS[1], until_at, 'PX', math.ceil(tonumber(ARGV[1]) / 1000) + 1)
end
return 1
"""

# KEYS: a rank's two waiting sets (by arrival, by deadline). ARGV: the caller. It stopped waiting.
FORGET = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""
