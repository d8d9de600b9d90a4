/**
 * The device protocol's wire types: JSON-RPC 2.0 requests the assistant sends to the phone inside
 * `agent-rpc` chat messages, the responses the phone posts back, and the built-in methods.
 *
 * The built-in methods' params, results and error data are generated (into generated/protocol.ts)
 * from protocol.json, a snapshot of the schemas the server validates answers with
 * (`GET /api/v1/agent/protocol`); the tests fail when the server's document and the snapshot differ.
 * Every type generated there is exported as it is, so a method added to the protocol brings its
 * `...Params` and `...Result` types with it.
 */

import {
  DEVICE_ERROR_CODES,
  PROTOCOL_CUSTOM_TYPE,
  PROTOCOL_METHODS,
  PROTOCOL_VERSION,
  type PermissionsGetStatusResult,
  type ProtocolMethods,
} from "./generated/protocol.js";

export type * from "./generated/protocol.js";
export { PROTOCOL_VERSION };

/** The request header that names the protocol version the app speaks (sent on every request). */
export const PROTOCOL_HEADER = "X-Truloop-Protocol";

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The `custom_type` of a chat message that carries a request for the phone. */
export const AGENT_RPC_CUSTOM_TYPE = PROTOCOL_CUSTOM_TYPE;

/**
 * The `custom_type` of a request's chat message once its call left `pending` (answered by any
 * device, expired, superseded or cancelled): the server updates the message in place, its `data`
 * then `{"id", "state", "method"}` (see {@link parseSettled}).
 */
export const AGENT_RPC_SETTLED_CUSTOM_TYPE = "agent-rpc-settled";

/** The assistant's Sendbird user id unless the deployment sets `TRULOOP_SENDBIRD_BOT_USER_ID`. */
export const DEFAULT_BOT_USER_ID = "truloop-assistant";

/** A JSON-RPC id: the server mints strings such as `call_5f0c2e…`. */
export type JsonRpcId = string | number;

/** A request from the assistant to the phone, as carried in an `agent-rpc` message's `data`. */
export interface JsonRpcRequest<M extends string = string, P = Record<string, unknown>> {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: M;
  params: P;
}

/** The `error` member of a failed JSON-RPC response. */
export interface JsonRpcErrorObject<D = unknown> {
  /** An integer: one of {@link ErrorCodes} or any other the app chooses. */
  code: number;
  /** A short name such as `PermissionRequired` (the server takes at most 1000 characters). */
  message: string;
  data?: D;
}

export interface JsonRpcSuccess<R = unknown> {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result: R;
}

export interface JsonRpcFailure<D = unknown> {
  jsonrpc: "2.0";
  id: JsonRpcId;
  error: JsonRpcErrorObject<D>;
}

/** What the phone posts to `POST /api/v1/agent/tool-message`: exactly one of `result` or `error`. */
export type JsonRpcResponse<R = unknown> = JsonRpcSuccess<R> | JsonRpcFailure;

/**
 * Error codes. The first three are the protocol's device errors (`errors` in the served protocol
 * document); the others are JSON-RPC 2.0's own, which this package sends when no handler is
 * registered for a method (-32601), when a request cannot be read (-32600) and when a handler
 * fails with something other than a {@link DeviceError} (-32603). The server accepts any integer.
 */
export const ErrorCodes = {
  // -32010 PermissionRequired (`data`: PermissionRequiredData), -32001 PermissionDenied, -32002 UserCanceled
  ...DEVICE_ERROR_CODES,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** What `permissions.getStatus` answers. */
export type PermissionStatus = PermissionsGetStatusResult["status"];

// ---- method maps ---------------------------------------------------------------------------

/** One method's params and result. */
export interface MethodSpec<P = unknown, R = unknown> {
  params: P;
  result: R;
}

/** Methods by name: the built-in ones, widened by the app with the methods of its declared tools. */
export type MethodMap = { [method: string]: MethodSpec };

/** The built-in device methods every app can be asked (generated from the protocol document). */
export interface BuiltinMethods extends ProtocolMethods {}

export type BuiltinMethod = keyof BuiltinMethods;

export const BUILTIN_METHODS: readonly BuiltinMethod[] = PROTOCOL_METHODS;

// ---- client-tools --------------------------------------------------------------------------

/** A JSON Schema (the server checks it is a valid one). */
export type JsonSchema = { [keyword: string]: unknown };

/** A device tool the app offers the assistant for its user (`PUT /api/v1/agent/client-tools`). */
export interface ClientToolDeclaration {
  /** `^[a-z][a-z0-9_]{0,63}$`; must not clash with a server or built-in device tool. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** The JSON-RPC method the request arrives with, e.g. `location.getCurrent`. */
  method: string;
  /** JSON Schema of `params`, `type: "object"`. */
  parameters: JsonSchema & { type: "object" };
  /** JSON Schema the result is checked against (422 when it does not fit). */
  result?: JsonSchema;
  /** True when the tool only reads: then its calls are not confirmed (unless `confirm` is true). */
  read_only?: boolean;
  /**
   * Whether each call first asks the user's yes (an `interaction.confirm` dialog) before the request
   * is sent; absent: confirmed unless `read_only`.
   */
  confirm?: boolean;
}

/** The whole declaration: it replaces the previous one and is kept for 30 days. */
export interface ClientToolsDeclaration {
  /**
   * At most 32; each schema at most 16 KiB. All of the user's devices together: at most 64 tools and
   * 64 KiB of names, descriptions and parameters.
   */
  tools: ClientToolDeclaration[];
  /**
   * The built-in methods this app version supports; absent: those of its `protocol` version. Names
   * the server does not know are ignored (an app may be newer than the server).
   */
  builtin?: (BuiltinMethod | (string & {}))[];
  /**
   * The protocol version the app speaks, `YYYY-MM-DD`: the assistant never sends it a method of a
   * later version. `declareTools` sends {@link PROTOCOL_VERSION}, this package's, unless given.
   */
  protocol?: string;
}
