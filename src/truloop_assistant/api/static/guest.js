// The guest page: the event in the organizer's zone and the guest's, the days to tick, a small chat.
// Everything comes from this page's own JSON (the token is in the path); nothing is loaded elsewhere.
"use strict";

const TEXTS = {
  en: {
    invited: "You are invited",
    pick: "Which days work for you?",
    save: "Save",
    saving: "Saving…",
    saved: "Saved",
    chat: "Questions? Ask the assistant",
    send: "Send",
    placeholder: "Message",
    organizer: "Organizer's time",
    yours: "Your time",
    same: "Your time too",
    deadline: "Please answer by {when}.",
    noDeadline: "Tick every day that works for you.",
    noDays: "There are no days left to pick.",
    cancelled: "This event was cancelled.",
    closed: "The deadline for answering has passed.",
    failed: "Something went wrong. Please try again.",
    offline: "Could not reach the server. Trying again…",
    rate_limited: "You are sending messages too fast; wait a little.",
    too_long: "That message is too long.",
    dropped: "The assistant is busy; please send it again in a moment.",
  },
  ko: {
    invited: "초대받으셨어요",
    pick: "가능한 날짜를 골라 주세요",
    save: "저장",
    saving: "저장 중…",
    saved: "저장했어요",
    chat: "궁금한 점은 어시스턴트에게 물어보세요",
    send: "보내기",
    placeholder: "메시지",
    organizer: "주최자 시간",
    yours: "내 시간",
    same: "내 시간과 같아요",
    deadline: "{when}까지 알려 주세요.",
    noDeadline: "가능한 날짜를 모두 골라 주세요.",
    noDays: "고를 수 있는 날짜가 없어요.",
    cancelled: "이 일정은 취소되었어요.",
    closed: "응답 기한이 지났어요.",
    failed: "문제가 생겼어요. 다시 시도해 주세요.",
    offline: "서버에 연결할 수 없어요. 다시 시도하는 중…",
    rate_limited: "메시지를 너무 빨리 보내고 있어요. 잠시 후에 보내 주세요.",
    too_long: "메시지가 너무 길어요.",
    dropped: "어시스턴트가 바빠요. 잠시 후 다시 보내 주세요.",
  },
};

const base = location.pathname.replace(/\/+$/, "");
const $ = (id) => document.getElementById(id);
let lang = (navigator.language || "en").toLowerCase().startsWith("ko") ? "ko" : "en";
const t = (key, values = {}) => TEXTS[lang][key].replace(/\{(\w+)\}/g, (_, name) => values[name] ?? "");
const guestZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

async function call(method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
    credentials: "omit",
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error((data.error && data.error.message) || response.statusText);
    error.status = response.status;
    throw error;
  }
  return data;
}

// -- times -----------------------------------------------------------------------------------------

function offsetMinutes(iso) {
  const match = /([+-])(\d\d):(\d\d)$/.exec(iso);
  return match ? (match[1] === "-" ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) : 0;
}

function offsetLabel(minutes) {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `UTC${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

// A zone to format in: an IANA name, or (no name known) the offset the event was given in, shown as
// UTC shifted by it.
function formatRange(start, end, zone, fixedOffset) {
  const options = { weekday: "short", month: "short", day: "numeric", hour: "numeric", minute: "2-digit" };
  const shift = zone ? 0 : fixedOffset * 60000;
  const format = new Intl.DateTimeFormat(lang, { ...options, timeZone: zone || "UTC" });
  const from = new Date(Date.parse(start) + shift);
  const to = new Date(Date.parse(end) + shift);
  return format.formatRange ? format.formatRange(from, to) : `${format.format(from)} – ${format.format(to)}`;
}

function timeLine(element, label, zoneName, text) {
  element.replaceChildren();
  const zone = document.createElement("span");
  zone.className = "zone";
  zone.textContent = `${label} · ${zoneName}`;
  const at = document.createElement("span");
  at.className = "at";
  at.textContent = text;
  element.append(zone, at);
}

function showTimes(event, organizerZone) {
  const fixed = offsetMinutes(event.start_time);
  const organizerName = organizerZone || offsetLabel(fixed);
  timeLine($("time-organizer"), t("organizer"), organizerName,
    formatRange(event.start_time, event.end_time, organizerZone, fixed));
  const mine = formatRange(event.start_time, event.end_time, guestZone, 0);
  const same = organizerZone ? organizerZone === guestZone : $("time-organizer").lastChild.textContent === mine;
  timeLine($("time-mine"), same ? t("same") : t("yours"), guestZone, mine);
}

// -- days ------------------------------------------------------------------------------------------

function dayLabel(iso) {
  const day = new Date(`${iso}T12:00:00Z`);
  const weekday = new Intl.DateTimeFormat(lang, { weekday: "long", timeZone: "UTC" }).format(day);
  const date = new Intl.DateTimeFormat(lang, { month: "short", day: "numeric", timeZone: "UTC" }).format(day);
  return { weekday, date };
}

function showDays(data) {
  const list = $("day-list");
  list.replaceChildren();
  const mine = new Set(data.mine);
  for (const iso of data.dates) {
    const item = document.createElement("li");
    const label = document.createElement("label");
    label.className = "day";
    const box = document.createElement("input");
    box.type = "checkbox";
    box.value = iso;
    box.checked = mine.has(iso);
    box.addEventListener("change", () => setSaveStatus("", ""));
    const { weekday, date } = dayLabel(iso);
    const text = document.createElement("span");
    const w = document.createElement("span");
    w.className = "weekday";
    w.textContent = weekday;
    const d = document.createElement("span");
    d.className = "date";
    d.textContent = date;
    text.append(w, d);
    label.append(box, text);
    item.append(label);
    list.append(item);
  }
  const deadline = data.event.availability_deadline;
  if (!data.dates.length) {
    $("deadline").textContent = t("noDays");
  } else if (deadline) {
    const when = new Intl.DateTimeFormat(lang, {
      month: "short", day: "numeric", hour: "numeric", minute: "2-digit", timeZone: guestZone,
    }).format(new Date(deadline));
    $("deadline").textContent = t("deadline", { when });
  } else {
    $("deadline").textContent = t("noDeadline");
  }
  $("save").hidden = !data.dates.length;
}

function setSaveStatus(text, kind) {
  const status = $("save-status");
  status.textContent = text;
  status.className = kind;
}

async function save() {
  const dates = [...document.querySelectorAll("#day-list input:checked")].map((box) => box.value);
  $("save").disabled = true;
  setSaveStatus(t("saving"), "");
  try {
    const saved = await call("PUT", "/api/availability", { dates });
    const kept = new Set(saved.dates);
    for (const box of document.querySelectorAll("#day-list input")) box.checked = kept.has(box.value);
    setSaveStatus(t("saved"), "ok");
  } catch (error) {
    setSaveStatus(error.status ? error.message : t("failed"), "error");
  } finally {
    $("save").disabled = false;
  }
}

// -- chat ------------------------------------------------------------------------------------------

let last = 0;

function addBubble(message) {
  const bubble = document.createElement("div");
  bubble.className = `bubble ${message.from}`;
  bubble.dataset.id = message.id;
  bubble.textContent = message.text;
  $("log").append(bubble);
  $("log").scrollTop = $("log").scrollHeight;
}

function chatStatus(text) {
  $("chat-status").textContent = text;
  $("chat-status").hidden = !text;
}

async function poll() {
  let offline = false;
  for (;;) {
    try {
      const data = await call("GET", `/api/messages?after=${last}&wait=20`);
      for (const message of data.messages) {
        if (message.id > last) {
          addBubble(message);
          last = message.id;
        }
      }
      if (offline) chatStatus("");
      offline = false;
    } catch (error) {
      if (error.status === 404) return; // the link stopped working: nothing more will come
      if (error.status !== 429) chatStatus(t("offline"));
      offline = error.status !== 429;
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
  }
}

async function send(event) {
  event.preventDefault();
  const text = $("message").value.trim();
  if (!text) return;
  $("send").disabled = true;
  try {
    const id = (crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2)).replace(/[^\w-]/g, "");
    const answer = await call("POST", "/api/messages", { text, id });
    $("message").value = "";
    chatStatus(TEXTS[lang][answer.status] ? t(answer.status) : "");
  } catch (error) {
    chatStatus(error.status ? error.message : t("failed"));
  } finally {
    $("send").disabled = false;
  }
}

// -- start -----------------------------------------------------------------------------------------

function applyTexts() {
  document.documentElement.lang = lang;
  for (const element of document.querySelectorAll("[data-text]")) element.textContent = t(element.dataset.text);
  $("message").placeholder = t("placeholder");
}

async function start() {
  let data;
  try {
    data = await call("GET", "/api");
  } catch (error) {
    $("notice").textContent = error.status === 404 ? error.message : t("failed");
    $("notice").hidden = false;
    document.body.dataset.ready = "error";
    return;
  }
  if (data.language === "ko" || data.language === "en") lang = data.language;
  applyTexts();
  $("title").textContent = data.event.title;
  document.title = data.event.title;
  if (data.event.location) {
    $("where").textContent = data.event.location;
    $("where").hidden = false;
  }
  showTimes(data.event, data.organizer_zone);
  if (data.cancelled || data.deadline_passed) {
    $("notice").textContent = data.cancelled ? t("cancelled") : t("closed");
    $("notice").hidden = false;
  }
  if (!data.cancelled) {
    showDays(data);
    $("days").hidden = false;
  }
  $("save").addEventListener("click", save);
  $("composer").addEventListener("submit", send);
  $("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) send(event);
  });
  document.body.dataset.ready = "true";
  poll();
}

document.addEventListener("DOMContentLoaded", start);
