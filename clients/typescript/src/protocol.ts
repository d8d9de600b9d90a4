/**
 * The device protocol's wire types: JSON-RPC 2.0 requests the assistant sends to the phone inside
 * `agent-rpc` chat messages, the responses the phone posts back, and the built-in methods.
 *
 * The schemas the server validates answers with are served at `GET /api/v1/agent/protocol`;
 * these types follow them.
 */

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The `custom_type` of a chat message that carries a request for the phone. */
export const AGENT_RPC_CUSTOM_TYPE = "agent-rpc";

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
  /** The app needs an OS permission it does not have; `data`: {@link PermissionRequiredData}. */
  PermissionRequired: -32010,
  /** The user refused the permission. */
  PermissionDenied: -32001,
  /** The user dismissed the request. */
  UserCanceled: -32002,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** `error.data` of a -32010 PermissionRequired answer. */
export interface PermissionRequiredData {
  /** The permission the app needs, e.g. `calendar.read`. */
  requiredPermission: string;
  /** Whether the OS lets the app ask the user again. */
  canPromptAgain: boolean;
  [key: string]: unknown;
}

// ---- calendar.getEvents --------------------------------------------------------------------

export interface CalendarGetEventsParams {
  /** ISO 8601 with offset, e.g. `2026-11-23T00:00:00+09:00`. */
  startDate: string;
  /** ISO 8601 with offset, e.g. `2026-11-29T23:59:59+09:00`. */
  endDate: string;
}

export interface CalendarEventTime {
  /** ISO 8601 with offset. */
  dateTime: string;
  [key: string]: unknown;
}

export interface CalendarEvent {
  id: string;
  title: string;
  start: CalendarEventTime;
  end: CalendarEventTime;
  /** More fields (location, attendees, ...) are kept and shown to the assistant. */
  [key: string]: unknown;
}

export interface CalendarGetEventsResult {
  /** At most 1000. */
  events: CalendarEvent[];
  [key: string]: unknown;
}

// ---- interaction.confirm -------------------------------------------------------------------

export interface InteractionConfirmParams {
  /** Show it as the dialog's title: it says exactly what will happen. */
  title: string;
  message: string;
  /** Button labels in the user's language, when the assistant gives them. */
  confirmLabel?: string;
  cancelLabel?: string;
  /** An OS permission the action needs, when it needs one. */
  permission?: string;
}

export interface InteractionConfirmResult {
  /** `false`: the action does not run, and the assistant is told. */
  confirmed: boolean;
  [key: string]: unknown;
}

// ---- permissions.getStatus -----------------------------------------------------------------

export interface PermissionsGetStatusParams {
  /** e.g. `calendar.read`. */
  permission: string;
}

export type PermissionStatus = "granted" | "denied" | "notDetermined" | "restricted";

export interface PermissionsGetStatusResult {
  status: PermissionStatus;
  canPromptAgain: boolean;
  [key: string]: unknown;
}

// ---- method maps ---------------------------------------------------------------------------

/** One method's params and result. */
export interface MethodSpec<P = unknown, R = unknown> {
  params: P;
  result: R;
}

/** Methods by name: the built-in ones, widened by the app with the methods of its declared tools. */
export type MethodMap = { [method: string]: MethodSpec };

/** The three built-in device methods every app can be asked. */
export interface BuiltinMethods {
  "calendar.getEvents": MethodSpec<CalendarGetEventsParams, CalendarGetEventsResult>;
  "interaction.confirm": MethodSpec<InteractionConfirmParams, InteractionConfirmResult>;
  "permissions.getStatus": MethodSpec<PermissionsGetStatusParams, PermissionsGetStatusResult>;
}

export type BuiltinMethod = keyof BuiltinMethods;

export const BUILTIN_METHODS: readonly BuiltinMethod[] = [
  "calendar.getEvents",
  "interaction.confirm",
  "permissions.getStatus",
];

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
}

/** The whole declaration: it replaces the previous one and is kept for 30 days. */
export interface ClientToolsDeclaration {
  /** At most 32; each schema at most 16 KiB. */
  tools: ClientToolDeclaration[];
  /**
   * The built-in methods this app version supports; absent: all of them. Names the server does not
   * know are ignored (an app may be newer than the server).
   */
  builtin?: (BuiltinMethod | (string & {}))[];
}
