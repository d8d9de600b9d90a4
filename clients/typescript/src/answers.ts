/**
 * The assistant's answers in the chat, as bubbles: an answer that streams is one message whose
 * text grows by in-place updates (`data` `{"streaming":true}` until its last update,
 * `{"streaming":false}`); a whole answer has no `data`.
 */
import { isObject, type ParseOptions, senderOf } from "./parse.js";
import { DEFAULT_BOT_USER_ID } from "./protocol.js";

/** An answer's message as its latest version says. */
export interface Answer {
  /** The chat message's id: the same for every update of it. */
  messageId: string | number;
  /** The channel it is in, when the message says. */
  channelUrl: string | undefined;
  /** Its text now (the whole text once `streaming` is false). */
  text: string;
  /**
   * Whether it still grows: its `data` says `{"streaming":true}`, and it changed within the stall
   * time (see {@link AnswerBubblesOptions.stallMs}). Show a subtle "writing…" mark while true.
   */
  streaming: boolean;
  /** It said it was streaming but has not changed for the stall time: show it as it is. */
  stalled: boolean;
  /** The message's `created_at` / `createdAt`, when it says. */
  createdAt: Date | undefined;
  /** The message as it was given (the Chat SDK's object, say). */
  message: unknown;
}

/** A new message or a new version of one, as {@link AnswerBubbles.receive} tells it. */
export interface AnswerEvent extends Answer {
  /**
   * The first time this device sees the message (its first send, as a rule): notify the user only
   * then, never for an update.
   */
  first: boolean;
}

type Obj = Record<string, unknown>;

function field(message: Obj, ...names: string[]): unknown {
  for (const name of names) if (message[name] !== undefined) return message[name];
  return undefined;
}

function millis(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** Whether a message's `data` (a JSON string, or already parsed) says `{"streaming": true}`. */
function saysStreaming(data: unknown): boolean {
  let value = data;
  if (typeof data === "string") {
    try {
      value = JSON.parse(data);
    } catch {
      return false;
    }
  }
  return isObject(value) && value["streaming"] === true;
}

/**
 * The answer in a chat message: a plain text message (no custom type) from the assistant, with
 * `streaming` as its `data` says. `null` for any other message (a request, a user's message, a
 * file). The Chat SDK's (`messageId`, `customType`, `sender.userId`) and the Platform API's or a
 * webhook's shapes (`message_id`, `custom_type`, `user.user_id`) are both read.
 */
export function parseAnswer(message: unknown, options: ParseOptions = {}): Answer | null {
  if (!isObject(message)) return null;
  const customType = field(message, "customType", "custom_type");
  if (customType !== undefined && customType !== null && customType !== "") return null;
  const bot = options.botUserId === undefined ? DEFAULT_BOT_USER_ID : options.botUserId;
  if (bot !== null && senderOf(message) !== bot) return null;
  const text = message["message"];
  const messageId = field(message, "messageId", "message_id");
  if (typeof text !== "string" || (typeof messageId !== "string" && typeof messageId !== "number")) return null;
  const channelUrl = field(message, "channelUrl", "channel_url");
  const createdAt = millis(field(message, "createdAt", "created_at"));
  const streaming = saysStreaming(message["data"]);
  return {
    messageId,
    channelUrl: typeof channelUrl === "string" ? channelUrl : undefined,
    text,
    streaming,
    stalled: false,
    createdAt: createdAt === undefined ? undefined : new Date(createdAt),
    message,
  };
}

export interface AnswerBubblesOptions extends ParseOptions {
  /**
   * After how long without a change a message that says it is streaming is shown as it is
   * (`streaming` false, `stalled` true): its last update may never come (the server stopped).
   * Default 30 s; the server updates a growing message about once a second.
   */
  stallMs?: number;
  /** Told of each new message and version, and of a stall. */
  onAnswer?: (answer: AnswerEvent) => void;
  /** The time now, in ms (tests). */
  now?: () => number;
}

export const DEFAULT_STALL_MS = 30_000;
const REMEMBERED_ANSWERS = 500;

interface Bubble {
  answer: Answer;
  /** When its latest version says it changed (`updatedAt`, else `createdAt`), to drop older versions. */
  version: number;
  /** Where it goes in the list: when it was sent, else when this device first saw it. */
  order: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * The answers of the chats this device shows, each kept at its latest version: give it every
 * received and updated message ({@link receive}); list them with {@link list} and follow changes
 * with {@link subscribe}. An older version arriving after a newer one, or a streaming version after
 * the last one, changes nothing. The last 500 messages are kept.
 */
export class AnswerBubbles {
  private readonly bubbles = new Map<string, Bubble>();
  private readonly listeners = new Set<() => void>();
  private readonly lists = new Map<string, readonly Answer[]>();
  private readonly options: AnswerBubblesOptions;
  private readonly stallMs: number;
  private readonly now: () => number;

  constructor(options: AnswerBubblesOptions = {}) {
    this.options = options;
    this.stallMs = options.stallMs ?? DEFAULT_STALL_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * Take a received or updated chat message: the answer it is now, with `first` set the first time
   * this message is seen; `null` for a message that is not an answer, or for a version older than
   * the one kept.
   */
  receive(message: unknown): AnswerEvent | null {
    const parsed = parseAnswer(message, this.options);
    if (parsed === null) return null;
    const key = String(parsed.messageId);
    const before = this.bubbles.get(key);
    const obj = message as Obj;
    const version = millis(field(obj, "updatedAt", "updated_at")) ?? parsed.createdAt?.getTime() ?? 0;
    if (before !== undefined) {
      if (version < before.version) return null;
      const ended = !before.answer.streaming && !before.answer.stalled;
      if (ended && parsed.streaming && version <= before.version) return null;
      clearTimeout(before.timer);
    }
    const answer = { ...parsed };
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (answer.streaming) {
      const age = version > 0 ? this.now() - version : 0;
      if (age >= this.stallMs) {
        answer.streaming = false;
        answer.stalled = true;
      } else {
        timer = setTimeout(() => this.stall(key), this.stallMs);
        (timer as { unref?: () => void }).unref?.(); // never keeps a process alive
      }
    }
    const order = before?.order ?? parsed.createdAt?.getTime() ?? this.now();
    this.bubbles.delete(key);
    this.bubbles.set(key, { answer, version, order, timer });
    if (this.bubbles.size > REMEMBERED_ANSWERS) {
      const [oldest, bubble] = this.bubbles.entries().next().value as [string, Bubble];
      clearTimeout(bubble.timer);
      this.bubbles.delete(oldest);
    }
    return this.changed({ ...answer, first: before === undefined });
  }

  private stall(key: string): void {
    const bubble = this.bubbles.get(key);
    if (bubble === undefined || !bubble.answer.streaming) return;
    bubble.answer = { ...bubble.answer, streaming: false, stalled: true };
    bubble.timer = undefined;
    this.changed({ ...bubble.answer, first: false });
  }

  private changed(event: AnswerEvent): AnswerEvent {
    this.lists.clear();
    try {
      this.options.onAnswer?.(event);
    } catch {
      // a failing listener must not fail the message's handling
    }
    for (const listener of [...this.listeners]) listener();
    return event;
  }

  /**
   * The answers kept, oldest first by when they were sent (of `channelUrl` only, when given):
   * the same array until one of them changes.
   */
  list(channelUrl?: string): readonly Answer[] {
    const key = channelUrl === undefined ? "" : `#${channelUrl}`;
    let list = this.lists.get(key);
    if (list === undefined) {
      list = [...this.bubbles.values()]
        .filter((b) => channelUrl === undefined || b.answer.channelUrl === channelUrl)
        .sort((a, b) => a.order - b.order)
        .map((b) => b.answer);
      this.lists.set(key, list);
    }
    return list;
  }

  /** Call `listener` whenever an answer is added or changes; returns the function that stops it. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
