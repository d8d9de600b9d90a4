/**
 * Calls as the server keeps them: the user's open requests (`GET /api/v1/agent/calls`), one call's
 * state (`GET /api/v1/agent/calls/{id}`), and the `agent-rpc-settled` update of a request's chat
 * message once its call left `pending`.
 */
import { AgentRpcParseError } from "./errors.js";
import { type AgentRpcRequest, isBotMessage, isObject, type ParseOptions, readId, recipientOf } from "./parse.js";
import { AGENT_RPC_SETTLED_CUSTOM_TYPE, type JsonRpcId } from "./protocol.js";

/**
 * Where a call is: `pending` until a device's answer settles it (`answered`), it expires
 * (`expired`, an hour by default), a newer message of the user replaces it (`superseded`), or the
 * devices that saw it could not run it and no other answered (`cancelled`).
 */
export type CallState = "pending" | "answered" | "expired" | "superseded" | "cancelled";

/** A state a call ends in; a newer server may add others. */
export type SettledState = Exclude<CallState, "pending"> | (string & {});

/** A call that left `pending`, as the updated chat message of its request tells it. */
export interface SettledCall {
  id: JsonRpcId;
  state: SettledState;
  /** The request's method, when the update names it. */
  method: string | undefined;
}

/** One call as `GET /api/v1/agent/calls/{id}` describes it. */
export interface CallInfo {
  id: JsonRpcId;
  method: string;
  params: Record<string, unknown>;
  channelUrl: string;
  state: CallState | (string & {});
  createdAt: Date;
  expiresAt: Date;
  /** When it left `pending`; `undefined` while pending. */
  settledAt: Date | undefined;
}

/** An open request of the user, from {@link AssistantClient.pending}: run it with `handleRequest`. */
export type PendingRequest = AgentRpcRequest & { channelUrl: string; createdAt: Date; expiresAt: Date };

/** Whether a chat message is the settled update of a request from the assistant. */
export function isSettledMessage(message: unknown, options: ParseOptions = {}): boolean {
  return isBotMessage(message, AGENT_RPC_SETTLED_CUSTOM_TYPE, options);
}

/**
 * The call a settled update tells of: the request's chat message, updated in place once its call
 * left `pending` (`custom_type` `agent-rpc-settled`, `data` `{"id", "state", "method"}`). `null` for
 * any other message; throws {@link AgentRpcParseError} for such an update whose `data` cannot be read.
 */
export function parseSettled(message: unknown, options: ParseOptions = {}): SettledCall | null {
  if (!isBotMessage(message, AGENT_RPC_SETTLED_CUSTOM_TYPE, options)) return null;
  const raw = message["data"];
  let data: unknown = raw;
  if (typeof raw === "string") {
    try {
      data = JSON.parse(raw);
    } catch {
      throw new AgentRpcParseError("the agent-rpc-settled message's data is not JSON");
    }
  }
  const id = isObject(data) ? readId(data["id"]) : undefined;
  if (!isObject(data) || id === undefined) {
    throw new AgentRpcParseError("the agent-rpc-settled message's data has no call id");
  }
  const state = data["state"];
  if (typeof state !== "string" || state === "") {
    // no id on the error: there is no request to answer, only an update that cannot be read
    throw new AgentRpcParseError(`the agent-rpc-settled message of ${String(id)} has no state`);
  }
  const method = data["method"];
  return { id, state, method: typeof method === "string" ? method : undefined };
}

function readDate(value: unknown): Date | undefined {
  if (typeof value !== "string") return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A call object of the calls endpoints, or `undefined` when it is not one. */
export function readCall(value: unknown): CallInfo | undefined {
  if (!isObject(value)) return undefined;
  const id = readId(value["id"]);
  const { method, params, channel_url: channelUrl, state } = value;
  const createdAt = readDate(value["created_at"]);
  const expiresAt = readDate(value["expires_at"]);
  if (
    id === undefined ||
    typeof method !== "string" ||
    !isObject(params) ||
    typeof channelUrl !== "string" ||
    typeof state !== "string" ||
    createdAt === undefined ||
    expiresAt === undefined
  ) {
    return undefined;
  }
  return { id, method, params, channelUrl, state, createdAt, expiresAt, settledAt: readDate(value["settled_at"]) };
}

/**
 * The request of a pending call, in the shape {@link parseAgentRpc} gives for its chat message.
 * `recipient` is the signed-in user (the calls endpoint lists only theirs); `notification` is the
 * call's text when the server gives one, else "".
 */
export function pendingRequest(call: CallInfo, raw: unknown, recipient: string | undefined): PendingRequest {
  const text = isObject(raw) ? (raw["notification"] ?? raw["message"]) : undefined;
  return {
    jsonrpc: "2.0",
    id: call.id,
    method: call.method,
    params: call.params,
    notification: typeof text === "string" ? text : "",
    channelUrl: call.channelUrl,
    messageId: undefined,
    recipient: recipient ?? recipientOf(raw),
    createdAt: call.createdAt,
    expiresAt: call.expiresAt,
    message: raw,
  };
}
