"""The Lua scripts that change a paused turn and its calls atomically in one conversation's hash slot."""

# Settles one call in a conversation's script: its pending record becomes a settled one (kept for
# late answers and ``GET /api/v1/agent/calls/{id}``), and an update of its agent-rpc message joins
# the conversation's outbox. Prepended to the scripts that end calls.
_SETTLE = """
local function pending_fields(pending)
  return redis.call('HMGET', pending, 'user_id', 'turn_id', 'channel_url', 'tool_name', 'method',
                    'bucket', 'created_at', 'expires_at', 'lang')
end
-- f: the pending record's fields (pending_fields), when the caller has read them already.
local function settle(pending, settled, outbox, call_id, state, now, ttl, outbox_max, outbox_ttl, extra, f)
  f = f or pending_fields(pending)
  redis.call('DEL', pending)
  local fields = {'state', state, 'user_id', f[1] or '', 'turn_id', f[2] or '',
                  'channel_url', f[3] or '', 'tool_name', f[4] or '', 'method', f[5] or '',
                  'bucket', f[6] or 'call', 'created_at', f[7] or now, 'expires_at', f[8] or now,
                  'settled_at', now}
  for _, v in ipairs(extra) do fields[#fields + 1] = v end
  redis.call('HSET', settled, unpack(fields))
  redis.call('EXPIRE', settled, ttl)
  local queued = redis.call('RPUSH', outbox, cjson.encode({kind = 'settle', dedup_id = 'settle:' .. call_id,
    created_at = now, call_id = call_id, state = state, method = f[5] or '', lang = f[9] or 'en'}))
  if queued > tonumber(outbox_max) then redis.call('LTRIM', outbox, -tonumber(outbox_max), -1) end
  redis.call('EXPIRE', outbox, outbox_ttl)
  return f[1]
end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
"""

# Records one answer and, for the last one, claims the resume — atomically, so that however
# many identical answers race in, exactly one of them returns 'resume'. ARGV[7] is the state the
# call ends in: 'answered' (a device's answer) or 'cancelled' (a -32601 nobody else overruled).
# KEYS: pending, settled, turn, outbox. ARGV: call id, fingerprint, answer, settled ttl, outbox max,
# outbox ttl, state.
RECORD_ANSWER = (
    _SETTLE
    + """
-- A call is pending or settled, never both: the script that settles it deletes its pending record.
local f = pending_fields(KEYS[1])
local expires_at = f[8]  -- every pending record has one
if not expires_at then
  local state = redis.call('HGET', KEYS[2], 'state')
  if not state then return {'unknown', ''} end
  local same = redis.call('HGET', KEYS[2], 'fp') == ARGV[2]
  if state == 'answered' then
    if same then return {'duplicate', ''} end
    return {'conflict', ''}
  end
  if state == 'cancelled' and same then return {'duplicate', ''} end
  return {'gone', state}
end
if tonumber(expires_at) < now then return {'gone', 'expired'} end
redis.call('HSET', KEYS[3], 'r:' .. ARGV[1], ARGV[3])
settle(KEYS[1], KEYS[2], KEYS[4], ARGV[1], ARGV[7], now, ARGV[4], ARGV[5], ARGV[6], {'fp', ARGV[2]}, f)
local remaining = redis.call('HINCRBY', KEYS[3], 'remaining', -1)
if remaining <= 0 and redis.call('HGET', KEYS[3], 'state') == 'paused' then
  redis.call('HSET', KEYS[3], 'state', 'resuming')
  return {'resume', '0'}
end
return {'accepted', tostring(remaining)}
"""
)

# A device answered -32601 (it cannot do that): the call stays pending for another device, noting
# the answer to end it with if none comes. KEYS: pending, settled, turn. ARGV: fingerprint, answer.
# Returns {'accepted', remaining} (or {'duplicate'} for the same answer again), else as above.
NOTE_UNHANDLED = """
local state = redis.call('HGET', KEYS[2], 'state')
if state then
  if redis.call('HGET', KEYS[2], 'fp') == ARGV[1] and (state == 'answered' or state == 'cancelled') then
    return {'duplicate', ''}
  end
  if state == 'answered' then return {'conflict', ''} end
  return {'gone', state}
end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'unknown', ''} end
local t = redis.call('TIME')
if tonumber(redis.call('HGET', KEYS[1], 'expires_at')) < tonumber(t[1]) + tonumber(t[2]) / 1e6 then
  return {'gone', 'expired'}
end
local noted = redis.call('HGET', KEYS[1], 'nf')
if noted == ARGV[1] then return {'duplicate', ''} end
if not noted then redis.call('HSET', KEYS[1], 'nf', ARGV[1], 'nf_answer', ARGV[2]) end
return {'accepted', redis.call('HGET', KEYS[3], 'remaining') or '0'}
"""

# Deletes KEYS[1] only while it still holds ARGV[1] (a later writer's value is left alone).
DELETE_IF_EQUAL = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# Cuts a paused turn short: its unanswered calls end as ARGV[6] ('superseded': the user wrote again;
# 'expired': the device did not answer in time). A superseded turn is closed; an expired one resumes.
# KEYS: turn, active marker, outbox, then (pending, settled) per call. ARGV: settled ttl, turn id, user,
# channel, done ttl, how, outbox max, outbox ttl, then the call ids. Returns the turn's state before:
# only 'paused' turns are cut.
CUT = (
    _SETTLE
    + """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'paused' then return state or '' end
for i = 4, #KEYS, 2 do
  local f = pending_fields(KEYS[i])
  if f[8] then  -- still pending
    local call_id = ARGV[9 + (i - 4) / 2]
    settle(KEYS[i], KEYS[i + 1], KEYS[3], call_id, ARGV[6], now, ARGV[1], ARGV[7], ARGV[8], {}, f)
  end
end
if ARGV[6] == 'superseded' then
  redis.call('HSET', KEYS[1], 'state', 'superseded')
  redis.call('EXPIRE', KEYS[1], ARGV[5])  -- read once more by the run that answers the new message
  if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
else
  redis.call('HSET', KEYS[1], 'state', 'resuming')
end
return 'paused'
"""
)

# Keeps only a turn's state (its record, the run it paused, and its answers go), for as long as the
# whole would have lived. KEYS: turn. ARGV: ttl s for a hash that had none. Returns 1 if it existed.
KEEP_STATE_ONLY = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return redis.call('DEL', KEYS[1]) end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', state)
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return 1
"""
