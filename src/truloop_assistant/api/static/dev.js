// The dev channel: a chat with the assistant that also plays the phone (it answers agent-rpc requests).
'use strict';

const $ = id => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children.filter(c => c !== null && c !== undefined && c !== false));
  return node;
};

const POLL_MS = 700, OFFLINE_POLL_MS = 1500, REQUEST_TIMEOUT_MS = 10000, UPLOAD_TIMEOUT_MS = 120000;
const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
const GUESTS = ['kim'];  // sample people outside the directory
const SUGGESTIONS = ['이번 주 일정 알려줘', 'What is my current location?', 'Schedule a lunch tomorrow at noon with @mina',
                     'what time is it in New York?', 'who is mina?', '연차는 며칠이야?'];
const SAMPLE_TOOL = {
  name: 'get_current_location',
  description: "The user's current location from their phone: latitude, longitude and a place name",
  method: 'location.getCurrent',
  read_only: true,
  parameters: {type: 'object', properties: {accuracy: {type: 'string', enum: ['coarse', 'fine']}},
               additionalProperties: false},
  result: {type: 'object', required: ['latitude', 'longitude'],
           properties: {latitude: {type: 'number'}, longitude: {type: 'number'}, label: {type: 'string'}}},
};
const STATUS = {
  not_addressed: () => `Not answered: in a group channel the assistant answers only when mentioned (@${S.bot}).`,
  rate_limited: () => 'Not run: over the rate limit (the assistant says so in the channel).',
  too_long: () => 'Not run: the message is too long.',
  duplicate: () => 'Already sent.',
  dropped: () => 'Not run: too many messages are waiting in this channel.',
};
const STATE_TEXT = {
  pending: 'Waiting', answered: 'Answered', expired: 'Expired', superseded: 'Superseded',
  cancelled: 'Cancelled', unknown: 'Closed',
};
// A request's message is updated in place once its call leaves pending (docs/protocol.md).
const AGENT_RPC = 'agent-rpc', AGENT_RPC_SETTLED = 'agent-rpc-settled';
// An answer that streams grows in place while its data says {"streaming":true}; one that never gets
// its end (the server stopped) is shown as it is once it has not changed for this long.
const STREAM_STALL_MS = 30000;

const S = {
  bot: 'truloop-assistant', serverZone: null, users: new Map(), lookedUp: new Map(),
  user: 'jeff', channel: 'demo', after: 0, generation: 0, messages: [],
  positions: new Map(),  // message id -> its index in messages
  calls: new Map(),  // call id -> {state, user_id} as the server last said
  asked: new Map(),  // call id -> {rpc, text}: the request as it came (its message is rewritten once it settles)
  token: null, tokenUser: null, online: true, infoLoaded: false, pendingSend: null, pollTimer: null,
  dialogCall: null, dialogDismissed: new Set(),
  maxFileBytes: 20 * 1024 * 1024,  // TRULOOP_MAX_FILE_BYTES, as /dev/api/info says
  attached: [],  // files to send with the next message: {blob, name, preview, uploaded: {channel, file}}
  recording: null,  // {recorder, stream, started, timer, cancelled} while a voice note is recorded
};

// ---- small helpers ------------------------------------------------------------------------------

class HttpError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

/** A call to the server: ``body`` is sent as JSON, ``raw`` (a Blob: a file) as it is, typed as it says. */
async function request(path, {method = 'GET', body, raw, token, timeout = REQUEST_TIMEOUT_MS} = {}) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (raw !== undefined) headers['content-type'] = raw.type || 'application/octet-stream';
  if (token) headers.authorization = 'Bearer ' + token;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeout);
  let r;
  try {
    r = await fetch(path, {method, headers, signal: abort.signal,
                           body: raw !== undefined ? raw : body === undefined ? undefined : JSON.stringify(body)});
  } catch (e) {
    throw new HttpError(0, 'network', e.name === 'AbortError' ? 'the server did not answer in time'
                                                               : 'the server cannot be reached');
  } finally { clearTimeout(timer); }
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (!r.ok) {
    const err = data && data.error;
    throw new HttpError(r.status, err ? err.code : `http_${r.status}`,
                        err ? err.message : `HTTP ${r.status}${text ? ': ' + text.slice(0, 200) : ''}`);
  }
  return {status: r.status, data};
}

const pad = n => String(n).padStart(2, '0');
const initials = id => (id.replace(/[^\p{L}\p{N}]/gu, '').slice(0, 2) || '?').toUpperCase();
function colorOf(id) {
  let h = 0;
  for (const c of id) h = (h * 31 + c.codePointAt(0)) % 360;
  return `hsl(${h} 55% 45%)`;
}
const store = {
  get(key, fallback) { try { return JSON.parse(localStorage.getItem('truloop-dev.' + key)) ?? fallback; } catch (e) { return fallback; } },
  set(key, value) { try { localStorage.setItem('truloop-dev.' + key, JSON.stringify(value)); } catch (e) { /* private mode */ } },
};
function rememberAnswer(callId, label) {
  const answers = store.get('answers', {});
  answers[callId] = label;
  const ids = Object.keys(answers);
  for (const old of ids.slice(0, Math.max(0, ids.length - 300))) delete answers[old];
  store.set('answers', answers);
}

// ---- people and time zones ----------------------------------------------------------------------

function isZone(zone) {
  try { new Intl.DateTimeFormat('en-US', {timeZone: zone}); return true; } catch (e) { return false; }
}
/** The zone the assistant speaks in for a person: theirs in the directory, else the server's default. */
function zoneOf(userId) {
  const person = S.users.get(userId) || S.lookedUp.get(userId);
  for (const zone of [person && person.timezone, S.serverZone]) if (zone && isZone(zone)) return zone;
  return BROWSER_ZONE;
}
function offsetMinutes(zone, utcMs) {
  const parts = new Intl.DateTimeFormat('en-US', {timeZone: zone, hourCycle: 'h23', year: 'numeric',
    month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric'}).formatToParts(new Date(utcMs));
  const p = Object.fromEntries(parts.map(x => [x.type, Number(x.value)]));
  return Math.round((Date.UTC(p.year, p.month - 1, p.day, p.hour % 24, p.minute, p.second) - utcMs) / 60000);
}
/** ISO 8601 with the offset of ``zone`` for a wall-clock time there (days past the month roll over). */
function wallClock(zone, y, m, d, hour) {
  const day = new Date(Date.UTC(y, m - 1, d));
  const guess = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), hour);
  const off = offsetMinutes(zone, guess - offsetMinutes(zone, guess) * 60000);
  const a = Math.abs(off);
  return `${day.getUTCFullYear()}-${pad(day.getUTCMonth() + 1)}-${pad(day.getUTCDate())}T${pad(hour)}:00:00` +
         `${off >= 0 ? '+' : '-'}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}
/** Monday of this week in ``zone`` as [y, m, d]; the request's own start date when it gives one. */
function weekStart(zone, params) {
  const given = /^(\d{4})-(\d{2})-(\d{2})/.exec((params && params.startDate) || '');
  if (given) return [Number(given[1]), Number(given[2]), Number(given[3])];
  const p = Object.fromEntries(new Intl.DateTimeFormat('en-US', {timeZone: zone, year: 'numeric', month: 'numeric',
    day: 'numeric'}).formatToParts(new Date()).map(x => [x.type, Number(x.value)]));
  const weekday = (new Date(Date.UTC(p.year, p.month - 1, p.day)).getUTCDay() + 6) % 7;
  return [p.year, p.month, p.day - weekday];
}
function sampleEvents(params, userId) {
  const zone = zoneOf(userId), [y, m, d] = weekStart(zone, params);
  return {events: [
    {id: 'e1', title: '팀 미팅', start: {dateTime: wallClock(zone, y, m, d + 1, 10)}, end: {dateTime: wallClock(zone, y, m, d + 1, 11)}},
    {id: 'e2', title: 'Lunch with Mina', start: {dateTime: wallClock(zone, y, m, d + 3, 12)}, end: {dateTime: wallClock(zone, y, m, d + 3, 13)}},
  ]};
}

// ---- what the phone answers ---------------------------------------------------------------------

const ICONS = {
  calendar: '<rect x="3" y="4.5" width="18" height="17" rx="2.5"/><path d="M16 2.5v4M8 2.5v4M3 10h18"/>',
  confirm: '<circle cx="12" cy="12" r="9.5"/><path d="M8 12.5l2.7 2.7L16.5 9.5"/>',
  permission: '<rect x="4.5" y="11" width="15" height="10" rx="2"/><path d="M8 11V7.5a4 4 0 0 1 8 0V11"/>',
  location: '<path d="M12 21.5s-7-6.3-7-11.5a7 7 0 0 1 14 0c0 5.2-7 11.5-7 11.5z"/><circle cx="12" cy="10" r="2.5"/>',
  phone: '<rect x="6" y="2" width="12" height="20" rx="2.5"/><path d="M11 18h2"/>',
};
function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon');
  svg.innerHTML = ICONS[name] || ICONS.phone;
  return svg;
}

const METHODS = {
  'calendar.getEvents': {
    icon: 'calendar', name: 'Calendar',
    summary: p => `${(p.startDate || '').slice(0, 10)} → ${(p.endDate || '').slice(0, 10)}`,
    answers: [
      ['Share sample events', (p, call) => ({result: sampleEvents(p, call.user_id)})],
      ['Empty calendar', () => ({result: {events: []}})],
      ['No permission', () => ({error: {code: -32010, message: 'PermissionRequired',
                                        data: {requiredPermission: 'calendar.read', canPromptAgain: true}}})],
    ],
  },
  'interaction.confirm': {
    icon: 'confirm', name: 'Confirmation', dialog: true,
    summary: p => p.message || '',
  },
  'permissions.getStatus': {
    icon: 'permission', name: 'Permission', summary: p => p.permission || '',
    answers: [
      ['Granted', () => ({result: {status: 'granted', canPromptAgain: false}})],
      ['Denied', () => ({result: {status: 'denied', canPromptAgain: true}})],
    ],
  },
  'location.getCurrent': {
    icon: 'location', name: 'Location', summary: p => (p.accuracy ? `accuracy: ${p.accuracy}` : ''),
    answers: [
      ['Share sample location', () => ({result: {latitude: 37.5663, longitude: 126.9779, label: 'Seoul City Hall'}})],
      ['Location off', () => ({error: {code: -32010, message: 'PermissionRequired',
                                       data: {requiredPermission: 'location', canPromptAgain: true}}})],
    ],
  },
};
const GENERIC = {
  icon: 'phone', name: 'App request', summary: () => '',
  answers: [['Not supported', () => ({error: {code: -32601, message: 'Method not found'}})]],
};
// Built-in methods as the server publishes them (GET /api/v1/agent/protocol): a method without a
// card of its own above still gets one, answered with the example result it is declared with.
const PUBLISHED = {};
function specFor(method) {
  if (METHODS[method]) return METHODS[method];
  const published = PUBLISHED[method];
  if (!published) return GENERIC;
  const shown = v => (typeof v === 'string' ? v : JSON.stringify(v));
  return {
    icon: 'phone', name: published.tool,
    summary: p => Object.entries(p).map(([k, v]) => `${k}: ${shown(v)}`).join(', '),
    answers: [['Answer with the example', () => ({result: published.example})], ...GENERIC.answers],
  };
}
const confirmLabels = p => {
  const korean = /[\uac00-\ud7a3]/.test(`${p.title || ''}${p.message || ''}`);
  return {ok: p.confirmLabel || (korean ? '확인' : 'Confirm'), cancel: p.cancelLabel || (korean ? '취소' : 'Cancel'), korean};
};

async function deviceToken(user, fresh = false) {
  if (!fresh && S.token && S.tokenUser === user) return S.token;
  const {data} = await request('/dev/api/token', {method: 'POST', body: {user_id: user}});
  S.token = data.token; S.tokenUser = user;
  return S.token;
}

/** Send the phone's JSON-RPC response (a new token once if the old one is refused); remember the answer. */
async function answer(rpc, body, label) {
  const payload = {jsonrpc: '2.0', id: rpc.id, ...body};
  let token = await deviceToken(S.user);
  let r;
  try {
    r = await request('/api/v1/agent/tool-message', {method: 'POST', body: payload, token});
  } catch (e) {
    if (e.status !== 401) throw e;
    token = await deviceToken(S.user, true);
    r = await request('/api/v1/agent/tool-message', {method: 'POST', body: payload, token});
  }
  rememberAnswer(rpc.id, label);
  setCall(rpc.id, {state: 'answered', user_id: S.user});
  return r;
}

// ---- the log ------------------------------------------------------------------------------------

const log = $('log');
const nearBottom = (grown = 0) => log.scrollHeight - log.scrollTop - log.clientHeight < 120 + grown;
const toBottom = () => { log.scrollTop = log.scrollHeight; };
function timeOf(ms) { return new Date(ms).toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'}); }
function dayOf(ms) {
  const day = new Date(ms), today = new Date();
  const yesterday = new Date(); yesterday.setDate(today.getDate() - 1);
  if (day.toDateString() === today.toDateString()) return 'Today';
  if (day.toDateString() === yesterday.toDateString()) return 'Yesterday';
  return day.toLocaleDateString([], {weekday: 'short', month: 'short', day: 'numeric', year: 'numeric'});
}

function note(text, kind = '') {
  const stick = nearBottom(), day = dayOf(Date.now());
  if (day !== lastDay) { log.append(el('div', {className: 'day', textContent: day})); lastDay = day; }
  lastSender = null;
  $('empty').hidden = true;
  log.append(el('div', {className: 'note ' + kind, textContent: text}));
  if (stick) toBottom();
}

let lastSender = null, lastDay = null;
function kindOf(m) {
  if (m.user_id === S.bot) return 'assistant';
  return m.user_id === S.user ? 'mine' : 'other';
}

/** Take a listed message: a new one is added, a changed one (same id, later update) replaces what is shown. */
function receive(m) {
  S.after = Math.max(S.after, m.message_id, m.updated_seq || 0);
  const at = S.positions.get(m.message_id);
  if (at !== undefined && (m.updated_seq || 0) <= (S.messages[at].updated_seq || 0)) return;  // seen already
  const req = requestOf(m);
  if (req && req.rpc) S.asked.set(req.id, {rpc: req.rpc, text: m.message});
  if (req && req.settled) {
    const before = S.calls.get(req.id);
    S.calls.set(req.id, {state: req.settled.state, user_id: (m.call || before || {}).user_id || ''});
  } else if (req && m.call !== undefined && !SETTLED.has((S.calls.get(req.id) || {}).state)) {
    S.calls.set(req.id, m.call);  // its state when it came; polls keep it current
  }
  if (at === undefined) {
    S.positions.set(m.message_id, S.messages.length);
    S.messages.push(m);
    render(m);
  } else {
    S.messages[at] = m;
    replace(m);
  }
}

/** Show a message's new version where the old one is: a request's card closes in place, an answer grows. */
function replace(m) {
  const req = requestOf(m), entry = req && cards.get(req.id);
  if (entry) {
    entry.message = m;
    refreshCard(req.id);
    return;
  }
  const stick = nearBottom();
  const row = log.querySelector(`.row[data-message-id="${m.message_id}"]`);
  const body = row && row.querySelector('.card, .bubble');
  if (!body) return;
  body.replaceWith(bodyOf(m));
  markWriting(row, m);
  if (stick) toBottom();
}

/** Whether a message is an answer still being written: plain, with data {"streaming":true}. */
function isStreaming(m) {
  if (m.custom_type) return false;
  try { return JSON.parse(m.data || '{}').streaming === true; } catch (e) { return false; }
}
/** The "writing…" mark under an answer (in ``holder``) that still grows; gone with its last update, or once it stalls. */
function markWriting(holder, m) {
  const old = holder.querySelector('.writing');
  if (old) old.remove();
  const changed = m.updated_at || m.created_at || Date.now();
  if (!isStreaming(m) || Date.now() - changed > STREAM_STALL_MS) return showStop();
  const mark = el('div', {className: 'writing', textContent: 'writing…'});
  mark.dataset.until = String(Date.now() + STREAM_STALL_MS);
  holder.querySelector('.bubble').after(mark);
  showStop();
}
function dropStalledMarks() {
  for (const mark of log.querySelectorAll('.writing')) if (Number(mark.dataset.until) < Date.now()) mark.remove();
  showStop();
}
/** The Stop button shows while an answer in the open channel is being written. */
function showStop() { $('stop').hidden = !log.querySelector('.writing'); }

function render(m) {
  $('empty').hidden = true;
  const stick = nearBottom() || m.user_id === S.user;
  const day = dayOf(m.created_at || Date.now());
  if (day !== lastDay) { log.append(el('div', {className: 'day', textContent: day})); lastDay = day; lastSender = null; }
  const kind = kindOf(m), first = lastSender !== m.user_id;
  lastSender = m.user_id;
  const row = el('div', {className: `row ${kind}${first ? ' first' : ''}`});
  row.dataset.messageId = m.message_id;
  row.dataset.sender = m.user_id;
  const stack = el('div', {className: 'stack'});
  if (kind !== 'mine') {
    const avatar = el('div', {className: 'avatar' + (kind === 'assistant' ? ' assistant' : '') + (first ? '' : ' spacer'),
                              textContent: kind === 'assistant' ? 'AI' : initials(m.user_id)});
    if (kind === 'other') avatar.style.background = colorOf(m.user_id);
    avatar.setAttribute('aria-hidden', 'true');
    row.append(avatar);
    if (first) stack.append(nameLine(m.user_id, kind));
  } else if (first) {
    stack.append(el('div', {className: 'name', textContent: `You (${m.user_id})`}));
  }
  stack.append(bodyOf(m));
  markWriting(stack, m);
  const when = m.created_at ? el('time', {className: 'time', textContent: timeOf(m.created_at),
                                          dateTime: new Date(m.created_at).toISOString(),
                                          title: new Date(m.created_at).toLocaleString()}) : null;
  stack.append(when);
  row.append(stack);
  log.append(row);
  if (stick) toBottom();
}

function nameLine(userId, kind) {
  if (kind === 'assistant') return el('div', {className: 'name'}, S.bot, el('span', {className: 'tag', textContent: 'assistant'}));
  const person = S.users.get(userId);
  const label = person && person.name && person.name !== userId ? `${person.name} (${userId})` : userId;
  return el('div', {className: 'name'}, label, person ? null : el('span', {className: 'tag', textContent: 'guest'}));
}

function bodyOf(m) {
  const req = requestOf(m);
  if (req) return requestCard(m, req.id);
  if (!m.files || !m.files.length) return el('div', {className: 'bubble', textContent: m.message});
  const channel = m.channel_url || S.channel;
  return el('div', {className: 'bubble with-files'},
            el('div', {className: 'files'}, ...m.files.map(f => fileView(channel, f))),
            m.message ? el('div', {className: 'caption', textContent: m.message}) : null);
}

// ---- files in messages --------------------------------------------------------------------------

const uploadPath = (channel, url) =>
  `/dev/api/channels/${encodeURIComponent(channel)}/uploads/${encodeURIComponent(url.replace(/^upload:/, ''))}`;
function sizeText(bytes) {
  if (typeof bytes !== 'number') return '';
  if (bytes < 1024) return `${bytes} B`;
  return bytes < 1024 * 1024 ? `${Math.round(bytes / 1024)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
/** What a file looks like it is, by its stated type, else its name: how the chat shows it (not what the server reads it as). */
function fileKind(type, name) {
  const t = (type || '').toLowerCase(), n = (name || '').toLowerCase();
  if (t.startsWith('image/') || /\.(jpe?g|png|gif|webp|hei[cf])$/.test(n)) return 'image';
  if (t.startsWith('audio/') || /\.(webm|ogg|oga|opus|m4a|mp3|wav)$/.test(n)) return 'audio';
  if (t === 'application/pdf' || n.endsWith('.pdf')) return 'pdf';
  return 'file';
}
/** A picture as a thumbnail (one the browser cannot show, such as HEIC, as a chip), a voice note as a player, a PDF as a chip. */
function fileView(channel, f) {
  const src = uploadPath(channel, f.url), kind = fileKind(f.stated_type, f.name);
  if (kind === 'image') {
    const link = el('a', {className: 'thumb-link', href: src, target: '_blank', rel: 'noopener', title: f.name || ''});
    const img = el('img', {className: 'thumb', src, alt: f.name || 'picture', loading: 'lazy'});
    img.onerror = () => link.replaceWith(fileChip(src, f, 'IMG'));
    img.onload = () => { if (nearBottom(img.clientHeight)) toBottom(); };  // the log grew under the reader
    link.append(img);
    return link;
  }
  if (kind === 'audio') return el('audio', {controls: true, preload: 'metadata', src, title: f.name || 'voice note'});
  return fileChip(src, f, kind === 'pdf' ? 'PDF' : 'FILE');
}
function fileChip(src, f, label) {
  return el('a', {className: 'file-chip', href: src, target: '_blank', rel: 'noopener', title: f.name || ''},
            el('span', {className: 'file-kind', textContent: label}),
            el('span', {className: 'file-name', textContent: f.name || label.toLowerCase()}),
            el('span', {className: 'file-size', textContent: sizeText(f.size)}));
}

function parseRpc(data) {
  try { const rpc = JSON.parse(data); return rpc && typeof rpc.id === 'string' ? rpc : null; } catch (e) { return null; }
}
/** The request behind a message: {id, rpc} while it is open, {id, settled: {id, state, method}} once settled. */
function requestOf(m) {
  if (m.custom_type === AGENT_RPC) {
    const rpc = parseRpc(m.data);
    return rpc && {id: rpc.id, rpc};
  }
  if (m.custom_type === AGENT_RPC_SETTLED) {
    const settled = parseRpc(m.data);
    return settled && {id: settled.id, settled};
  }
  return null;
}

// ---- request cards ------------------------------------------------------------------------------

const cards = new Map();  // call id -> {card, rpc, message}, message as last listed (open or settled)
const SETTLED = new Set(['answered', 'expired', 'superseded', 'cancelled']);

/** A request's card. Shown first once settled (a reload), it has only what the update says: no params, no text. */
function requestCard(m, callId) {
  const asked = S.asked.get(callId), req = requestOf(m);
  const rpc = asked ? asked.rpc : {id: callId, method: req.settled.method || ''};
  const spec = specFor(rpc.method);
  const card = el('div', {className: 'card'});
  card.dataset.callId = callId;
  card.dataset.method = rpc.method;
  const badge = el('span', {className: 'badge'});
  const summary = asked ? spec.summary(rpc.params || {}) : '';
  card.append(...[
    el('div', {className: 'card-head'}, icon(spec.icon), el('span', {className: 'card-name', textContent: spec.name}), badge),
    asked ? el('div', {className: 'card-text', textContent: asked.text}) : null,
    summary ? el('div', {className: 'card-summary', textContent: summary}) : null,
    el('div', {className: 'method', textContent: rpc.method}),
    asked ? el('details', {}, el('summary', {textContent: 'JSON-RPC request'}),
               el('pre', {textContent: JSON.stringify(rpc, null, 2)})) : null,
    el('div', {className: 'actions'}),
    el('div', {className: 'outcome', role: 'status'}),
  ].filter(Boolean));
  cards.set(callId, {card, rpc, message: m});
  refreshCard(callId);
  return card;
}

function setCall(callId, call) {
  const before = S.calls.get(callId);
  if (before && SETTLED.has(before.state) && (!call || call.state === 'pending')) return;  // a late, older answer
  S.calls.set(callId, call);
  refreshCard(callId);
}

function refreshCard(callId) {
  const entry = cards.get(callId);
  if (!entry) return;
  const {card, rpc} = entry, spec = specFor(rpc.method);
  const call = S.calls.get(callId);
  const state = call ? call.state : 'unknown';
  card.dataset.state = state;
  const badge = card.querySelector('.badge');
  badge.className = 'badge ' + state;
  badge.textContent = STATE_TEXT[state] || state;
  const actions = card.querySelector('.actions'), outcome = card.querySelector('.outcome');
  actions.replaceChildren();
  const answered = store.get('answers', {})[callId];
  const update = requestOf(entry.message).settled ? entry.message : null;
  if (state === 'pending') {
    if (call.user_id && call.user_id !== S.user) {
      closeDialogFor(callId);
      outcome.textContent = `For ${call.user_id}'s phone: switch to ${call.user_id} to answer.`;
      return;
    }
    if (!outcome.classList.contains('error')) outcome.textContent = '';
    if (spec.dialog) {
      actions.append(el('button', {type: 'button', className: 'primary', textContent: 'Open the dialog',
                                   onclick: () => openDialog(callId)}));
      if (!S.dialogDismissed.has(callId)) queueDialog(callId);
    } else {
      for (const [label, make] of spec.answers) {
        actions.append(el('button', {type: 'button', textContent: label,
                                     onclick: () => send(callId, make(rpc.params || {}, call), label)}));
      }
    }
    actions.append(customAnswer(callId));
    return;
  }
  closeDialogFor(callId);
  outcome.classList.remove('error');
  const mine = state === 'answered' && answered ? `Answered: ${answered}` : '';
  if (update) {  // what the server's update says, as an app shows it; then what this page answered
    outcome.textContent = [update.message, mine].filter(Boolean).join('\n');
    showUpdate(card, update);
    return;
  }
  outcome.textContent = mine || {
    answered: 'Answered on the phone.',
    expired: 'The phone did not answer in time.',
    superseded: 'A newer message took its place; it can no longer be answered.',
    cancelled: 'None of the phones could do it; it was cancelled.',
    unknown: 'The server no longer knows this request.',
  }[state] || '';
}

/** The settled update's data beside the request, for whoever writes the app's side of it. */
function showUpdate(card, update) {
  let details = card.querySelector('details.update');
  if (!details) {
    details = el('details', {className: 'update'}, el('summary', {textContent: `Update (${AGENT_RPC_SETTLED})`}), el('pre'));
    card.querySelector('.actions').before(details);
  }
  let data = update.data;
  try { data = JSON.stringify(JSON.parse(update.data), null, 2); } catch (e) { /* shown as it came */ }
  details.querySelector('pre').textContent = data;
}

function customAnswer(callId) {
  const area = el('textarea', {value: '{"result": {}}', spellcheck: false, ariaLabel: 'JSON-RPC answer'});
  const go = el('button', {type: 'button', textContent: 'Send this answer', onclick: () => {
    let body;
    try { body = JSON.parse(area.value); } catch (e) { return showOutcome(callId, 'Not JSON: ' + e.message, true); }
    send(callId, body, 'custom answer');
  }});
  return el('details', {className: 'custom'}, el('summary', {textContent: 'Custom answer'}), area, go);
}

function showOutcome(callId, text, error = false) {
  const entry = cards.get(callId);
  if (!entry) return;
  const outcome = entry.card.querySelector('.outcome');
  outcome.textContent = text;
  outcome.classList.toggle('error', error);
}

async function send(callId, body, label) {
  const entry = cards.get(callId);
  if (!entry) return;
  const buttons = entry.card.querySelectorAll('.actions button');
  buttons.forEach(b => { b.disabled = true; });
  showOutcome(callId, 'Sending…');
  try {
    await answer(entry.rpc, body, label);
    kick();
  } catch (e) {
    buttons.forEach(b => { b.disabled = false; });
    if (e.code === 'call_expired' || e.code === 'call_superseded') {
      setCall(callId, {state: e.code === 'call_expired' ? 'expired' : 'superseded', user_id: S.user});
    } else if (e.code === 'already_answered') {
      setCall(callId, {state: 'answered', user_id: S.user});
    } else {
      showOutcome(callId, `Not sent: ${e.message}${e.status === 0 || e.status >= 500 ? ' — try again.' : ''}`, true);
    }
  }
}

// ---- the confirmation dialog --------------------------------------------------------------------

const dialog = $('confirm');
const dialogQueue = [];
function queueDialog(callId) {
  if (S.dialogCall === callId || dialogQueue.includes(callId)) return;
  dialogQueue.push(callId);
  if (!dialog.open) openDialog(dialogQueue[0]);
}
function openDialog(callId) {
  const entry = cards.get(callId);
  const call = S.calls.get(callId);
  if (!entry || !call || call.state !== 'pending') return;
  const idx = dialogQueue.indexOf(callId);
  if (idx >= 0) dialogQueue.splice(idx, 1);
  const p = entry.rpc.params || {}, labels = confirmLabels(p);
  S.dialogCall = callId;
  S.dialogDismissed.delete(callId);
  $('confirm-title').textContent = p.title || 'Confirm';
  $('confirm-message').textContent = p.message || '';
  $('confirm-permission').hidden = !p.permission;
  $('confirm-permission').textContent = p.permission ? `This needs the permission ${p.permission}.` : '';
  $('confirm-ok').textContent = labels.ok;
  $('confirm-cancel').textContent = labels.cancel;
  showFields(Array.isArray(p.editable) ? p.editable : [], labels.korean);
  dialog.dataset.callId = callId;
  if (!dialog.open) dialog.showModal();
}
function closeDialog() {
  S.dialogCall = null;
  delete dialog.dataset.callId;
  if (dialog.open) dialog.close();
  while (dialogQueue.length) {
    const next = dialogQueue[0], call = S.calls.get(next);
    if (call && call.state === 'pending' && call.user_id === S.user) { openDialog(next); return; }
    dialogQueue.shift();
  }
}
function closeDialogFor(callId) {
  const idx = dialogQueue.indexOf(callId);
  if (idx >= 0) dialogQueue.splice(idx, 1);
  if (S.dialogCall === callId) closeDialog();
}
// What the person may change before saying yes (the server's own dialogs list it in params.editable):
// times in their zone, shown without the offset and sent back with it.
const offsetOf = value => (/([+-]\d{2}:\d{2}|Z)$/.exec(String(value || '')) || [''])[0];
function showFields(editable, korean) {
  const fields = $('confirm-fields');
  fields.replaceChildren();
  fields.hidden = editable.length === 0;
  for (const field of editable) {
    const label = document.createElement('label');
    const name = document.createElement('span');
    name.textContent = field.label || field.name;
    const input = document.createElement('input');
    input.id = `edit-${field.name}`;
    input.name = field.name;
    input.dataset.type = field.type;
    if (field.type === 'datetime') {
      input.type = 'datetime-local';
      input.value = String(field.value || '').slice(0, 16);
      input.dataset.offset = offsetOf(field.value);
    } else {
      input.type = 'text';
      input.value = Array.isArray(field.value) ? field.value.join(', ') : String(field.value || '');
    }
    input.dataset.initial = input.value;
    label.append(name, input);
    fields.append(label);
  }
  $('confirm-reason').value = '';
  $('confirm-always').checked = false;
  $('confirm-reason-label').textContent = korean ? '거절하는 이유 (선택)' : 'Reason, if you say no (optional)';
  $('confirm-always-label').textContent = korean ? '다음부터 묻지 않기' : 'Always allow this';
}
function edits() {
  const edited = {};
  for (const input of $('confirm-fields').querySelectorAll('input')) {
    if (input.value === input.dataset.initial) continue;
    if (input.dataset.type === 'datetime') {
      edited[input.name] = `${input.value.length === 16 ? `${input.value}:00` : input.value}${input.dataset.offset}`;
    } else if (input.dataset.type === 'users') {
      edited[input.name] = input.value.split(',').map(v => v.trim()).filter(Boolean);
    } else {
      edited[input.name] = input.value;
    }
  }
  return edited;
}
function decide(confirmed) {
  const callId = S.dialogCall;
  if (!callId) return;
  const labels = confirmLabels(cards.get(callId).rpc.params || {});
  const result = {confirmed};
  if (confirmed) {
    const edited = edits();
    if (Object.keys(edited).length) result.edited = edited;
    if ($('confirm-always').checked) result.remember = 'always';
  } else if ($('confirm-reason').value.trim()) {
    result.reason = $('confirm-reason').value.trim();
  }
  closeDialog();
  send(callId, {result}, confirmed ? labels.ok : labels.cancel);
}
$('confirm-ok').onclick = () => decide(true);
$('confirm-cancel').onclick = () => decide(false);
dialog.addEventListener('cancel', e => {  // Esc: put it away without answering; the card reopens it
  e.preventDefault();
  if (S.dialogCall) S.dialogDismissed.add(S.dialogCall);
  closeDialog();
});

// ---- polling ------------------------------------------------------------------------------------

function setOnline(ok, error) {
  S.online = ok;
  const banner = $('banner');
  banner.hidden = ok;
  if (!ok) {
    banner.textContent = !error || error.status === 0 ? "Can't reach the dev server. Retrying…"
      : error.status < 500 ? `The dev server refused the request: ${error.message}`
      : `The dev server has a problem (${error.message}). Retrying…`;
  }
}

async function poll() {
  clearTimeout(S.pollTimer);
  const generation = S.generation;
  try {
    if (!S.infoLoaded) { await loadInfo(); rerender(); }
    const {data} = await request(`/dev/api/channels/${encodeURIComponent(S.channel)}/messages?after=${S.after}`);
    if (generation !== S.generation) return;
    for (const m of data.messages) receive(m);
    dropStalledMarks();
    $('typing').hidden = !data.typing;
    const open = [...cards.keys()].filter(id => (S.calls.get(id) || {}).state === 'pending');
    if (open.length) {
      const query = open.slice(-100).map(id => 'id=' + encodeURIComponent(id)).join('&');
      const states = (await request('/dev/api/calls?' + query)).data.calls;
      if (generation !== S.generation) return;
      for (const [id, call] of Object.entries(states)) {
        const before = S.calls.get(id);
        if (!before || !call || before.state !== call.state) setCall(id, call);
      }
    }
    if (!S.online) setOnline(true);
  } catch (e) {
    if (generation === S.generation) setOnline(false, e);
  }
  if (generation === S.generation) S.pollTimer = setTimeout(poll, S.online ? POLL_MS : OFFLINE_POLL_MS);
}
const kick = () => setTimeout(poll, 50);

function reload() {
  S.generation += 1;
  S.after = 0; S.messages = []; S.positions.clear(); lastSender = null; lastDay = null;
  cards.clear(); S.calls.clear(); S.asked.clear(); dialogQueue.length = 0;
  if (dialog.open) closeDialog();
  log.replaceChildren($('empty'));
  $('empty').hidden = false;
  $('typing').hidden = true;
  poll();
}

function rerender() {  // the same messages seen as someone else
  lastSender = null; lastDay = null;
  const messages = S.messages;
  cards.clear(); dialogQueue.length = 0;
  if (dialog.open) closeDialog();
  log.replaceChildren($('empty'));
  $('empty').hidden = messages.length > 0;
  for (const m of messages) render(m);
}

// ---- sending ------------------------------------------------------------------------------------

const input = $('message');
function sendError(text) {
  $('send-error').hidden = !text;
  $('send-error').textContent = text || '';
}
const sameFiles = (a, b) => a.length === b.length && a.every((f, i) => f === b[i]);
$('composer').onsubmit = async e => {
  e.preventDefault();
  const text = input.value.trim(), files = S.attached.slice();
  if (!text && !files.length) return;
  // A retry of the same text carries the same dedup_id: if the first try did arrive, it is not shown twice.
  const before = S.pendingSend;
  if (!before || before.text !== text || before.channel !== S.channel || before.user !== S.user || !sameFiles(before.files, files)) {
    S.pendingSend = {text, files, channel: S.channel, user: S.user, dedup: crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2)};
  }
  const attempt = S.pendingSend;
  $('send').disabled = true;
  try {
    const body = {user_id: attempt.user, message: attempt.text, dedup_id: attempt.dedup};
    if (attempt.files.length) body.files = await uploadAll(attempt.channel, attempt.files);
    const {data} = await request(`/dev/api/channels/${encodeURIComponent(attempt.channel)}/messages`, {method: 'POST', body});
    if (input.value.trim() === text) { input.value = ''; grow(); }
    S.attached = S.attached.filter(a => !attempt.files.includes(a));
    for (const a of attempt.files) if (a.preview) URL.revokeObjectURL(a.preview);
    showAttached();
    S.pendingSend = null;
    sendError('');
    if (data.status !== 'queued' && data.status !== 'duplicate') note((STATUS[data.status] || (() => data.status))());
    kick();
  } catch (err) {
    sendError(`Not sent: ${err.message}. Your message is still here: press Send to try again.`);
    if (err.status === 0) setOnline(false, err);
  } finally {
    $('send').disabled = false;
    input.focus();
  }
};

// ---- attaching and recording --------------------------------------------------------------------

/** Keep each file for the channel (once: a retry sends what was kept); the message's ``files``. */
async function uploadAll(channel, files) {
  const kept = [];
  for (const a of files) {
    if (!a.uploaded || a.uploaded.channel !== channel) {
      const path = `/dev/api/channels/${encodeURIComponent(channel)}/uploads?name=${encodeURIComponent(a.name)}`;
      const {data} = await request(path, {method: 'POST', raw: a.blob, timeout: UPLOAD_TIMEOUT_MS});
      a.uploaded = {channel, file: data.file};
    }
    kept.push(a.uploaded.file);
  }
  return kept;
}
const MAX_FILES = 10;  // a message carries at most 10 files (MAX_FILES_PER_MESSAGE)
/** Add files to the next message: a file over the server's limit (or past the tenth) is refused here, with why. */
function attach(blobs) {
  const refused = [];
  for (const blob of blobs) {
    const name = (blob.name || 'file').slice(0, 255);
    if (blob.size > S.maxFileBytes) { refused.push(`${name} is larger than ${sizeText(S.maxFileBytes)}`); continue; }
    if (S.attached.length >= MAX_FILES) { refused.push(`a message carries at most ${MAX_FILES} files`); break; }
    const preview = fileKind(blob.type, name) === 'image' ? URL.createObjectURL(blob) : null;
    S.attached.push({blob, name, preview, uploaded: null});
  }
  sendError(refused.length ? `Not attached: ${refused.join('; ')}.` : '');
  showAttached();
}
function showAttached() {
  const tray = $('attached');
  const chips = S.attached.map(a => {
    const kind = fileKind(a.blob.type, a.name);
    const remove = el('button', {type: 'button', textContent: '×', title: 'Remove', ariaLabel: `Remove ${a.name}`, onclick: () => {
      S.attached = S.attached.filter(x => x !== a);
      if (a.preview) URL.revokeObjectURL(a.preview);
      showAttached();
    }});
    const look = a.preview ? el('img', {src: a.preview, alt: ''})
      : el('span', {className: 'file-kind', textContent: {audio: '♪', pdf: 'PDF'}[kind] || 'FILE'});
    return el('div', {className: 'pending-file', role: 'listitem', title: `${a.name} · ${sizeText(a.blob.size)}`},
              look, el('span', {className: 'file-name', textContent: a.name}), remove);
  });
  const rec = S.recording;
  if (rec) {
    const seconds = Math.floor((Date.now() - rec.started) / 1000);
    chips.push(el('div', {className: 'pending-file recording', role: 'listitem'},
      el('span', {textContent: `● Recording ${Math.floor(seconds / 60)}:${pad(seconds % 60)}`}),
      el('button', {type: 'button', textContent: '×', title: 'Discard the recording', ariaLabel: 'Discard the recording',
                    onclick: () => stopRecording(false)})));
  }
  tray.replaceChildren(...chips);
  tray.hidden = !chips.length;
}
$('attach').onclick = () => $('file-input').click();
$('file-input').onchange = e => { attach([...e.target.files]); e.target.value = ''; input.focus(); };
input.addEventListener('paste', e => {  // a picture pasted into the message is attached
  const files = [...((e.clipboardData && e.clipboardData.files) || [])];
  if (files.length) { e.preventDefault(); attach(files); }
});

// A voice note: recorded in the browser (webm or ogg Opus; Safari records mp4), sent when recording stops.
const VOICE_TYPES = ['audio/webm;codecs=opus', 'audio/ogg;codecs=opus', 'audio/webm', 'audio/ogg', 'audio/mp4'];
const MAX_VOICE_MS = 5 * 60 * 1000;
const canRecord = !!(window.MediaRecorder && navigator.mediaDevices && navigator.mediaDevices.getUserMedia);
if (!canRecord) {
  $('record').disabled = true;
  $('record').title = 'Recording needs a browser with MediaRecorder, on localhost or https';
}
async function startRecording() {
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({audio: true});
  } catch (e) {
    sendError(`Cannot record: ${e.name === 'NotAllowedError' ? 'the microphone is not allowed for this page' : e.message}.`);
    return;
  }
  const mimeType = VOICE_TYPES.find(t => MediaRecorder.isTypeSupported(t));
  const recorder = new MediaRecorder(stream, mimeType ? {mimeType} : {});
  const rec = {recorder, stream, started: Date.now(), chunks: [], keep: true, timer: null};
  recorder.ondataavailable = e => { if (e.data && e.data.size) rec.chunks.push(e.data); };
  recorder.onstop = () => {
    clearInterval(rec.timer);
    stream.getTracks().forEach(t => t.stop());
    S.recording = null;
    $('record').classList.remove('recording');
    $('record').setAttribute('aria-pressed', 'false');
    showAttached();
    if (!rec.keep || !rec.chunks.length) return;
    const type = (recorder.mimeType || rec.chunks[0].type || 'audio/webm').split(';')[0];
    const ext = {'audio/ogg': 'ogg', 'audio/mp4': 'm4a'}[type] || 'webm';
    const stamp = new Date(rec.started);
    const name = `voice-note-${stamp.getFullYear()}${pad(stamp.getMonth() + 1)}${pad(stamp.getDate())}-${pad(stamp.getHours())}${pad(stamp.getMinutes())}${pad(stamp.getSeconds())}.${ext}`;
    const before = S.attached.length;
    attach([new File(rec.chunks, name, {type})]);
    if (S.attached.length > before) $('composer').requestSubmit();
  };
  S.recording = rec;
  recorder.start(1000);
  rec.timer = setInterval(() => {
    if (Date.now() - rec.started >= MAX_VOICE_MS) stopRecording(true); else showAttached();
  }, 1000);
  $('record').classList.add('recording');
  $('record').setAttribute('aria-pressed', 'true');
  sendError('');
  showAttached();
}
/** Stop the voice note: ``send`` it (with the text typed, as its caption), or discard it. */
function stopRecording(send) {
  const rec = S.recording;
  if (!rec || rec.recorder.state === 'inactive') return;
  rec.keep = send;
  rec.recorder.stop();
}
$('record').onclick = () => (S.recording ? stopRecording(true) : startRecording());

// Stop: the person's running answer here ends where it is (POST /api/v1/agent/turns/stop, as the app does).
$('stop').onclick = async () => {
  const body = {channel_url: S.channel};
  $('stop').disabled = true;
  try {
    try {
      await request('/api/v1/agent/turns/stop', {method: 'POST', body, token: await deviceToken(S.user)});
    } catch (e) {
      if (e.status !== 401) throw e;
      await request('/api/v1/agent/turns/stop', {method: 'POST', body, token: await deviceToken(S.user, true)});
    }
    kick();
  } catch (err) {
    sendError(`Not stopped: ${err.message}`);
  } finally {
    $('stop').disabled = false;
  }
};
function grow() { input.style.height = 'auto'; input.style.height = Math.min(input.scrollHeight + 2, 140) + 'px'; }
input.addEventListener('input', grow);
input.addEventListener('keydown', e => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
    e.preventDefault();
    $('composer').requestSubmit();
  }
});
for (const text of SUGGESTIONS) {
  $('chips').append(el('button', {type: 'button', textContent: text, role: 'listitem', onclick: () => {
    input.value = text; grow(); input.focus();
  }}));
}

// ---- who and where ------------------------------------------------------------------------------

function params() { return new URLSearchParams(location.search); }
function remember() {
  store.set('session', {user: S.user, channel: S.channel});
  const q = params();
  q.set('user', S.user); q.set('channel', S.channel);
  history.replaceState(null, '', `${location.pathname}?${q}`);
  $('subtitle').textContent = `# ${S.channel} · as ${S.user}`;
  $('typing-text').textContent = `${S.bot} is typing…`;
  describeUser();
}

function fillUsers() {
  const select = $('user-select');
  const members = el('optgroup', {label: 'Directory'});
  for (const [id, p] of S.users) {
    const place = p.timezone ? ` · ${p.timezone.split('/').pop().replace(/_/g, ' ')}` : '';
    members.append(el('option', {value: id, textContent: `${p.name && p.name !== id ? `${p.name} (${id})` : id}${place}`}));
  }
  const guests = el('optgroup', {label: 'Guests (not in the directory)'});
  for (const id of GUESTS.filter(g => !S.users.has(g))) guests.append(el('option', {value: id, textContent: `${id} · guest`}));
  const known = new Set([...S.users.keys(), ...GUESTS]);
  const others = el('optgroup', {label: 'Anyone'});
  if (!known.has(S.user)) others.append(el('option', {value: S.user, textContent: S.user}));
  others.append(el('option', {value: '\u0000other', textContent: 'Someone else…'}));
  select.replaceChildren(...[members, guests, others].filter(g => g.children.length));
  select.value = S.user;
}

async function describeUser() {
  const user = S.user;
  let person = S.users.get(user) || S.lookedUp.get(user);
  if (!person && !S.lookedUp.has(user)) {
    try { person = (await request(`/dev/api/users/${encodeURIComponent(user)}`)).data; } catch (e) { person = null; }
    S.lookedUp.set(user, person);
  }
  if (user !== S.user) return;
  $('user-info').textContent = person
    ? `${person.name || user}${person.title ? ' · ' + person.title : ''} · ${person.timezone || S.serverZone || BROWSER_ZONE}`
    : `${user} is not in the directory (a guest); times are in ${S.serverZone || BROWSER_ZONE}.`;
  toolsState();
}

function switchUser(user) {
  if (!user || user === S.user) return;
  S.user = user;
  remember();
  fillUsers();
  rerender();
}
$('user-select').onchange = e => {
  if (e.target.value === '\u0000other') {
    $('user-other').hidden = false; $('user-other').value = ''; $('user-other').focus();
    return;
  }
  $('user-other').hidden = true;
  switchUser(e.target.value);
};
$('user-other').onchange = e => {
  const user = e.target.value.trim();
  $('user-other').hidden = true;
  if (user) switchUser(user.slice(0, 128)); else fillUsers();
};
function switchChannel(channel) {
  channel = channel.trim();
  if (!channel || channel === S.channel) { $('channel').value = S.channel; return; }
  S.channel = channel;
  $('channel').value = channel;
  remember();
  reload();
}
$('channel').onchange = e => switchChannel(e.target.value);
$('direct').onclick = () => switchChannel(`relay-${S.bot}-${S.user}`);
$('new-channel').onclick = () => switchChannel(`chat-${Date.now().toString(36)}`);
$('more').onclick = () => {
  const panel = $('panel');
  panel.hidden = !panel.hidden;
  $('more').setAttribute('aria-expanded', String(!panel.hidden));
  toolsState();
};

// ---- app tools ----------------------------------------------------------------------------------

/** What the current user's phone has declared; asked only while the panel shows it (it counts in their rate limit). */
async function toolsState() {
  const user = S.user, label = $('tools-state');
  if ($('panel').hidden) return;
  try {
    const {data} = await request('/api/v1/agent/client-tools', {token: await deviceToken(user)});
    if (user === S.user) showTools((data.tools || []).map(t => t.name));
  } catch (e) {
    if (user !== S.user) return;
    label.textContent = e.status === 404 || e.status === 405 ? 'not supported by this server' : `unknown (${e.message})`;
  }
}
function showTools(names) {
  $('tools-state').textContent = names.length ? names.join(', ') : 'none declared';
  $('undeclare').disabled = !names.length;
}
$('declare').onclick = async () => {
  const button = $('declare');
  button.disabled = true;
  try {
    await request('/api/v1/agent/client-tools', {method: 'PUT', token: await deviceToken(S.user), body: {tools: [SAMPLE_TOOL]}});
    note(`${S.user}'s phone declared the app tool ${SAMPLE_TOOL.name} (${SAMPLE_TOOL.method}).`);
    showTools([SAMPLE_TOOL.name]);
  } catch (e) {
    note(`Could not declare the app tool: ${e.message}`, 'error');
  } finally { button.disabled = false; }
};
$('undeclare').onclick = async () => {
  try {
    await request('/api/v1/agent/client-tools', {method: 'DELETE', token: await deviceToken(S.user)});
    note(`${S.user}'s phone removed its app tools.`);
    showTools([]);
  } catch (e) { note(`Could not remove the app tools: ${e.message}`, 'error'); }
};

// ---- start --------------------------------------------------------------------------------------

async function loadProtocol() {
  const {data} = await request('/api/v1/agent/protocol');
  Object.assign(PUBLISHED, data.methods);
}

async function loadInfo() {
  const [info, users] = await Promise.all([request('/dev/api/info'), request('/dev/api/users')]);
  S.bot = info.data.bot_user_id;
  S.serverZone = info.data.timezone || null;
  if (info.data.max_file_bytes) S.maxFileBytes = info.data.max_file_bytes;
  for (const p of users.data.users) S.users.set(p.user_id, p);
  S.infoLoaded = true;
  $('bot-name').textContent = S.bot;
  document.querySelectorAll('.bot-id').forEach(e => { e.textContent = S.bot; });
  fillUsers();
  remember();
}

async function start() {
  const saved = store.get('session', {});
  S.user = (params().get('user') || saved.user || 'jeff').slice(0, 128);
  S.channel = params().get('channel') || saved.channel || 'demo';
  $('channel').value = S.channel;
  fillUsers();
  remember();
  try { await Promise.all([loadInfo(), loadProtocol()]); } catch (e) { setOnline(false, e); }
  document.body.dataset.ready = 'true';
  poll();
}
start();
