import { AgentRpcParseError } from "./errors.js";
import {
  AGENT_RPC_CUSTOM_TYPE,
  DEFAULT_BOT_USER_ID,
  type JsonRpcId,
  type JsonRpcRequest,
} from "./protocol.js";

/** A request for the phone, read from an `agent-rpc` chat message. */
export interface AgentRpcRequest<M extends string = string, P = Record<string, unknown>>
  extends JsonRpcRequest<M, P> {
  /** The message's text: what the chat shows while the app works (e.g. "Checking your calendar…"). */
  notification: string;
  /** The channel it was posted in, when the message says. */
  channelUrl: string | undefined;
  /** The chat message's id, when the message says. */
  messageId: string | number | undefined;
  /**
   * The user whose phone is to answer it: the user the message mentions (see {@link recipientOf}).
   * `undefined` when it mentions nobody (a server from before mentions): then it is for whoever
   * the turn belongs to, as before.
   */
  recipient: string | undefined;
  /** When the request was made: the message's `created_at` / `createdAt`, when it says. */
  createdAt: Date | undefined;
  /** When its call expires, when known (requests from {@link AssistantClient.pending}). */
  expiresAt: Date | undefined;
  /** The chat message it came in (or the call object `pending()` read it from), as given. */
  message: unknown;
}

export interface ParseOptions {
  /**
   * Only messages from this user are requests (the assistant's Sendbird user id,
   * `TRULOOP_SENDBIRD_BOT_USER_ID` on the server). Default `"truloop-assistant"`; `null` takes
   * `agent-rpc` messages from anyone (not recommended outside tests).
   */
  botUserId?: string | null;
}

type Obj = Record<string, unknown>;

/** @internal */
export function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function field(message: Obj, ...names: string[]): unknown {
  for (const name of names) if (message[name] !== undefined) return message[name];
  return undefined;
}

/**
 * Who sent a chat message, in any of the shapes a Sendbird message comes in: the Chat SDK's
 * `sender.userId`, the Platform API's `user.user_id`, a webhook's `sender.user_id`, or a flat
 * `user_id` / `userId`.
 */
export function senderOf(message: unknown): string | undefined {
  if (!isObject(message)) return undefined;
  for (const holder of [message["sender"], message["user"]]) {
    if (isObject(holder)) {
      const id = field(holder, "userId", "user_id");
      if (typeof id === "string") return id;
    }
  }
  const flat = field(message, "user_id", "userId");
  return typeof flat === "string" ? flat : undefined;
}

/** The ids in a list of users (`[{userId}]` or `[{user_id}]`) or of ids, in order; others skipped. */
function userIds(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  const ids: string[] = [];
  for (const entry of list) {
    const id = isObject(entry) ? field(entry, "userId", "user_id") : entry;
    if (typeof id === "string" && id !== "") ids.push(id);
  }
  return ids;
}

/**
 * The user an `agent-rpc` message is for: the first user it mentions, in any of the shapes a
 * Sendbird message comes in: the Chat SDK's `mentionedUsers: [{userId}]` or `mentionedUserIds`,
 * the Platform API's and webhooks' `mentioned_users: [{user_id}]`, or `mentioned_user_ids` (as a
 * message is sent). `undefined` when it mentions nobody.
 */
export function recipientOf(message: unknown): string | undefined {
  if (!isObject(message)) return undefined;
  for (const name of ["mentionedUsers", "mentionedUserIds", "mentioned_users", "mentioned_user_ids"]) {
    const [first] = userIds(message[name]);
    if (first !== undefined) return first;
  }
  return undefined;
}

/**
 * Whether `message` is the assistant's (see {@link ParseOptions.botUserId}) and of `customType`
 * (`customType` in the Chat SDK, `custom_type` in the Platform API and webhooks).
 * @internal
 */
export function isBotMessage(message: unknown, customType: string, options: ParseOptions): message is Obj {
  if (!isObject(message) || field(message, "customType", "custom_type") !== customType) return false;
  const bot = options.botUserId === undefined ? DEFAULT_BOT_USER_ID : options.botUserId;
  return bot === null || senderOf(message) === bot;
}

/** Whether a chat message carries a request for the phone (without reading the request). */
export function isAgentRpcMessage(message: unknown, options: ParseOptions = {}): boolean {
  return isBotMessage(message, AGENT_RPC_CUSTOM_TYPE, options);
}

/** A JSON-RPC id: a non-empty string or a safe integer. @internal */
export function readId(id: unknown): JsonRpcId | undefined {
  if (typeof id === "string" && id !== "") return id;
  if (typeof id === "number" && Number.isSafeInteger(id)) return id;
  return undefined;
}

/**
 * Read the JSON-RPC request out of a Sendbird message.
 *
 * - Any message that is not an `agent-rpc` message from the assistant (see
 *   {@link ParseOptions.botUserId}) gives `null`: pass every message received and act on the
 *   requests whose `recipient` is the signed-in user (or `undefined`).
 * - An `agent-rpc` message from the assistant whose `data` is not a JSON-RPC 2.0 request (not JSON,
 *   no `method`, `params` not an object, ...) throws {@link AgentRpcParseError}. Its `id` is set
 *   when the request's id could be read, so the request can still be answered with an error
 *   (`AssistantClient.handleMessage` answers -32600 Invalid Request then); without an id nothing
 *   can be answered. The server never sends such a message: it means the app and the server
 *   disagree on the protocol, which is worth a crash report rather than silence.
 */
export function parseAgentRpc(message: unknown, options: ParseOptions = {}): AgentRpcRequest | null {
  if (!isAgentRpcMessage(message, options)) return null;
  const msg = message as Obj;
  const raw = msg["data"];
  let request: unknown;
  if (typeof raw === "string") {
    try {
      request = JSON.parse(raw);
    } catch {
      throw new AgentRpcParseError("the agent-rpc message's data is not JSON");
    }
  } else {
    request = raw; // some wrappers hand over data already parsed
  }
  if (!isObject(request)) {
    throw new AgentRpcParseError("the agent-rpc message's data is not a JSON-RPC request object");
  }
  const id = readId(request["id"]);
  if (id === undefined) {
    throw new AgentRpcParseError("the JSON-RPC request has no id (a non-empty string or an integer)");
  }
  if (request["jsonrpc"] !== "2.0") {
    throw new AgentRpcParseError('the JSON-RPC request is not version "2.0"', id);
  }
  const method = request["method"];
  if (typeof method !== "string" || method === "") {
    throw new AgentRpcParseError("the JSON-RPC request has no method", id);
  }
  const params = request["params"] === undefined ? {} : request["params"];
  if (!isObject(params)) {
    throw new AgentRpcParseError(`the params of ${method} are not an object`, id);
  }
  const text = field(msg, "message");
  const channelUrl = field(msg, "channelUrl", "channel_url");
  const messageId = field(msg, "messageId", "message_id");
  const createdAt = field(msg, "createdAt", "created_at");
  return {
    jsonrpc: "2.0",
    id,
    method,
    params,
    notification: typeof text === "string" ? text : "",
    channelUrl: typeof channelUrl === "string" ? channelUrl : undefined,
    messageId: typeof messageId === "string" || typeof messageId === "number" ? messageId : undefined,
    recipient: recipientOf(msg),
    createdAt: typeof createdAt === "number" && Number.isFinite(createdAt) ? new Date(createdAt) : undefined,
    expiresAt: undefined,
    message,
  };
}
