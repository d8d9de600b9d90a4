"""The inbox's Redis scripts (see :mod:`.inbox`): each a claim, a push or a hand-out done atomically
within one conversation's hash tag."""

from __future__ import annotations

from . import keys
from .transcript import APPEND_LINE

# Wakes a drain that waits for a device's answer (see ``NEXT``): a push, or an update for its outbox.
RING_IF_WAITING = """
local function ring_if_waiting(waiting, bell, ttl_ms)
  if redis.call('EXISTS', waiting) == 1 then
    redis.call('RPUSH', bell, '1')
    redis.call('PEXPIRE', bell, ttl_ms)
  end
end
"""

# Hands out the inbox's head with its start counted: {event, eid, starts, ...}. Behind a person's
# message (a decided one) it gathers the messages of the same person that directly follow it, each
# with its start counted too, and adds them as {..., event, eid} pairs: one turn (see ``inbox.py``).
# It stops at the first event that is someone else's, a resume or undecided, and within
# BURST_MAX_MESSAGES messages and BURST_MAX_CHARS characters of text (counted as Python counts them:
# code points, not bytes). Reads the followers one by one: most heads have none.
HAND_OUT = """
local function chars(text)
  if type(text) ~= 'string' then return 0 end
  local _, continuation = string.gsub(text, '[\\128-\\191]', '')
  return #text - continuation
end
local function hand_out(inbox, attempts, head, ttl)
  local first = cjson.decode(head)
  local out = {head, first['eid'], redis.call('HINCRBY', attempts, first['eid'], 1)}
  if first['kind'] == 'message' and first['undecided'] ~= true then
    local total = chars(first['text'])
    for i = 1, MAX_MESSAGES - 1 do
      local raw = redis.call('LINDEX', inbox, i)
      if not raw then break end
      local event = cjson.decode(raw)
      if event['kind'] ~= 'message' or event['undecided'] == true or event['user_id'] ~= first['user_id'] then
        break
      end
      total = total + chars(event['text'])
      if total > MAX_CHARS then break end
      redis.call('HINCRBY', attempts, event['eid'], 1)
      out[#out + 1] = raw
      out[#out + 1] = event['eid']
    end
  end
  redis.call('EXPIRE', attempts, ttl)
  return out
end
""".replace("MAX_MESSAGES", str(keys.BURST_MAX_MESSAGES)).replace("MAX_CHARS", str(keys.BURST_MAX_CHARS))

# KEYS: seen mark (or the inbox when unused), inbox, owner, transcript, waiting drain, its bell
# ARGV: event, candidate owner, owner ttl ms, seen ttl s, use seen (0/1), inbox max, inbox ttl s,
#       the message's own line for the transcript ('' for none), minus the lines kept, transcript ttl s
PUSH = (
    APPEND_LINE
    + RING_IF_WAITING
    + """
if ARGV[5] == '1' and not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[4]) then
  return {'duplicate', ''}
end
if redis.call('RPUSH', KEYS[2], ARGV[1]) > tonumber(ARGV[6]) then
  redis.call('RPOP', KEYS[2])  -- the event just pushed: the inbox was full
  if ARGV[5] == '1' then redis.call('DEL', KEYS[1]) end
  return {'full', ''}
end
redis.call('EXPIRE', KEYS[2], ARGV[7])
if ARGV[8] ~= '' then append_line(KEYS[4], ARGV[8], ARGV[9], ARGV[10]) end
if redis.call('SET', KEYS[3], ARGV[2], 'NX', 'PX', ARGV[3]) then return {'queued', ARGV[2]} end
ring_if_waiting(KEYS[5], KEYS[6], ARGV[3])  -- its drain may be waiting for this
return {'queued', ''}
"""
)

# Undo a push whose job could not be enqueued. KEYS: as PUSH. ARGV: event, owner, use seen, line
UNDO = """
redis.call('LREM', KEYS[2], -1, ARGV[1])
if ARGV[3] == '1' then redis.call('DEL', KEYS[1]) end
if redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
if ARGV[4] ~= '' then redis.call('LREM', KEYS[4], -1, ARGV[4]) end
return 1
"""

# Take (or keep) the claim, and read the outbox's oldest message: the drain delivers it first. With
# the outbox empty, the inbox's head is handed out as ``NEXT`` would (its start counted), or, with
# the inbox empty too, the claim is given up: a drain's first step costs one round trip, not two.
# A claim taken by an owner the drain note does not name yet notes it, with its worker and the time
# (for ``inspect``). KEYS: owner, outbox, inbox, attempts, drain note. ARGV: owner, ttl ms, attempts
# ttl s, worker, now. Returns {0} (not ours), {1, oldest message} (deliver first), {2, event, eid,
# starts, gathered event, eid, ...} (run it) or {3} (nothing; released).
CLAIM = (
    HAND_OUT
    + """
local function note()
  local noted = redis.call('GET', KEYS[5])
  if not noted or string.sub(noted, 1, #ARGV[1] + 1) ~= ARGV[1] .. ' ' then
    redis.call('SET', KEYS[5], ARGV[1] .. ' ' .. ARGV[5] .. ' ' .. ARGV[4], 'EX', ARGV[3])
  end
end
local cur = redis.call('GET', KEYS[1])
if cur ~= ARGV[1] and cur then return {0} end
local oldest = redis.call('LINDEX', KEYS[2], 0)
if oldest then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  note()
  return {1, oldest}
end
local head = redis.call('LINDEX', KEYS[3], 0)
if not head then
  if cur then redis.call('DEL', KEYS[1]) end
  return {3}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
note()
local out = hand_out(KEYS[3], KEYS[4], head, ARGV[3])
table.insert(out, 1, 2)
return out
"""
)

REFRESH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# Give up the claim unless an event came in since the drain last looked: it was pushed while the
# claim was held, so nobody else was asked to run it. KEYS: owner, inbox. ARGV: owner. Returns 1
# (released), 2 (events waiting: the claim is kept) or 0 (not ours).
RELEASE_IF_QUIET = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('LLEN', KEYS[2]) > 0 then return 2 end
return redis.call('DEL', KEYS[1])
"""

# A drain stopped while it waited for a device's answer gives the conversation up. KEYS: owner,
# waiting, bell. ARGV: owner.
STOP_WAITING = """
redis.call('DEL', KEYS[2], KEYS[3])
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# Take a step's events off the inbox if they are still at its head, in order: the event it ran and
# the ones gathered behind it. KEYS: inbox, attempts. ARGV: event, eid, event, eid... Returns how
# many were taken off.
POP_IF_HEAD = """
local gone = 0
for i = 1, #ARGV, 2 do
  if redis.call('LINDEX', KEYS[1], 0) ~= ARGV[i] then break end
  redis.call('LPOP', KEYS[1])
  redis.call('HDEL', KEYS[2], ARGV[i + 1])
  gone = gone + 1
end
return gone
"""

# The drain's step to its next event, in one round trip: take the event it just ran off the inbox
# (if its step did not), then hand out the head with its start counted; or, with none left, give the
# claim up — unless something was put in the outbox meanwhile (a request's update), which the drain
# delivers first, or the drain asked to wait for a device's answer (ARGV[5] ms): then it keeps the
# claim and is marked waiting, so that a push rings its bell. A drain back from waiting (ARGV[6]) is
# unmarked first. The events gathered behind the one just run go with it (a step takes them all off
# in its transaction, or none). KEYS: inbox, attempts, owner, outbox, waiting, bell. ARGV: the event
# just run ('' for none), its eid, owner, attempts ttl, wait ms (0: none), back from waiting (0/1),
# then the gathered events' event, eid pairs. Returns {event, eid, starts, gathered event, eid, ...};
# 0 to deliver first; 1 to wait; nil once released.
NEXT = (
    HAND_OUT
    + """
if ARGV[6] == '1' then redis.call('DEL', KEYS[5], KEYS[6]) end
local head = redis.call('LINDEX', KEYS[1], 0)
if ARGV[1] ~= '' and head == ARGV[1] then
  redis.call('LPOP', KEYS[1])
  redis.call('HDEL', KEYS[2], ARGV[2])
  head = redis.call('LINDEX', KEYS[1], 0)
  for i = 7, #ARGV, 2 do
    if head ~= ARGV[i] then break end
    redis.call('LPOP', KEYS[1])
    redis.call('HDEL', KEYS[2], ARGV[i + 1])
    head = redis.call('LINDEX', KEYS[1], 0)
  end
end
if not head then
  if redis.call('LLEN', KEYS[4]) > 0 then return 0 end
  local mine = redis.call('GET', KEYS[3]) == ARGV[3]
  if mine and tonumber(ARGV[5]) > 0 then
    redis.call('SET', KEYS[5], ARGV[3], 'PX', ARGV[5])
    return 1
  end
  if mine then redis.call('DEL', KEYS[3]) end
  return nil
end
return hand_out(KEYS[1], KEYS[2], head, ARGV[4])
"""
)

# Take a person's events off the inbox: their messages, and resumes of their turns (a set, from
# ARGV[2] on). KEYS: inbox, attempts. ARGV: user id, turn ids... Returns how many were taken off.
FORGET = """
local turns = {}
for i = 2, #ARGV do turns[ARGV[i]] = true end
local gone = 0
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ok, event = pcall(cjson.decode, raw)
  if ok and type(event) == 'table' and (event['user_id'] == ARGV[1] or turns[event['turn_id']]) then
    gone = gone + redis.call('LREM', KEYS[1], 1, raw)
    if event['eid'] then redis.call('HDEL', KEYS[2], event['eid']) end
  end
end
return gone
"""

# A person edited or deleted a message (see ``inbox_revisions``). A message still waiting in the inbox
# (not handed out yet: no start counted) gets its new text, or is taken off; one handed out is left to
# its step. Its transcript line follows: as the inbox's event did, else as asked for a message that
# ran. A deletion marks the message seen, so that its own delivery, should it come after, is not run.
# Whatever was found is noted in the admission list. KEYS: inbox, attempts, transcript, seen mark,
# admissions. ARGV: message id, new text while waiting ('' with ARGV[3] = 'drop': take it off),
# waiting action ('edit'|'drop'), the line's new text, line action once run ('edit'|'drop'), seen ttl s
# ('': no mark), admission entry, admissions kept, admissions ttl s. Returns {where, lines changed}:
# where is 'waiting', 'running' or 'ran' (also for a message never seen here).
REVISE = """
local where = 'ran'
for i, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ok, event = pcall(cjson.decode, raw)
  if ok and type(event) == 'table' and event['kind'] == 'message' and event['message_id'] == ARGV[1] then
    if event['eid'] and redis.call('HEXISTS', KEYS[2], event['eid']) == 1 then
      where = 'running'
    else
      where = 'waiting'
      if ARGV[3] == 'drop' then
        redis.call('LREM', KEYS[1], 1, raw)
      else
        event['text'] = ARGV[2]
        redis.call('LSET', KEYS[1], i - 1, cjson.encode(event))
      end
    end
    break
  end
end
local action = ARGV[5]
if where == 'waiting' then action = ARGV[3] end
local lines = 0
for i, raw in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
  local ok, line = pcall(cjson.decode, raw)
  if ok and type(line) == 'table' and line['message_id'] == ARGV[1] then
    if action == 'drop' then
      redis.call('LREM', KEYS[3], 1, raw)
    else
      line['text'] = ARGV[4]
      redis.call('LSET', KEYS[3], i - 1, cjson.encode(line))
    end
    lines = lines + 1
    break
  end
end
if ARGV[6] ~= '' then redis.call('SET', KEYS[4], '1', 'NX', 'EX', ARGV[6]) end
if where ~= 'ran' or lines > 0 then
  redis.call('LPUSH', KEYS[5], ARGV[7])
  redis.call('LTRIM', KEYS[5], 0, tonumber(ARGV[8]) - 1)
  redis.call('EXPIRE', KEYS[5], ARGV[9])
end
return {where, lines}
"""
