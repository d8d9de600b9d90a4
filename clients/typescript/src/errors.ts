import type { SettledCall, SettledState } from "./calls.js";
import {
  ErrorCodes,
  type JsonRpcErrorObject,
  type JsonRpcResponse,
  type PermissionRequiredData,
} from "./protocol.js";

/**
 * Thrown by a method handler to answer the request with a JSON-RPC error instead of a result.
 * The assistant sees `message (code)` and the permission details, and explains them to the user.
 *
 * ```ts
 * throw DeviceError.permissionRequired("calendar.read", true);
 * throw DeviceError.userCanceled();
 * throw new DeviceError(-32050, "LocationUnavailable", { reason: "airplane mode" });
 * ```
 */
export class DeviceError<D = unknown> extends Error {
  override readonly name = "DeviceError";
  readonly code: number;
  readonly data: D | undefined;

  constructor(code: number, message: string, data?: D) {
    super(message);
    if (!Number.isInteger(code)) throw new TypeError(`a JSON-RPC error code is an integer, not ${code}`);
    this.code = code;
    this.data = data;
  }

  /** -32010: the app needs an OS permission it does not have. */
  static permissionRequired(
    requiredPermission: string,
    canPromptAgain: boolean,
  ): DeviceError<PermissionRequiredData> {
    return new DeviceError(ErrorCodes.PermissionRequired, "PermissionRequired", {
      requiredPermission,
      canPromptAgain,
    });
  }

  /** -32001: the user refused the permission. */
  static permissionDenied(): DeviceError<undefined> {
    return new DeviceError(ErrorCodes.PermissionDenied, "PermissionDenied");
  }

  /** -32002: the user dismissed the request. */
  static userCanceled(): DeviceError<undefined> {
    return new DeviceError(ErrorCodes.UserCanceled, "UserCanceled");
  }

  /** The `error` member of the JSON-RPC response. */
  toJsonRpcError(): JsonRpcErrorObject<D> {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** An `agent-rpc` message whose `data` is not a JSON-RPC 2.0 request. */
export class AgentRpcParseError extends Error {
  override readonly name = "AgentRpcParseError";
  /** The request's id when it could be read: then the request can still be answered with an error. */
  readonly id: string | number | undefined;

  constructor(message: string, id?: string | number) {
    super(message);
    this.id = id;
  }
}

/**
 * Why a handler's `signal` aborted: its call settled elsewhere (another device of the user answered
 * it, it expired, the user wrote again, ...). Its request is not answered; a handler may simply
 * `throw signal.reason`.
 */
export class CallSettledError extends Error {
  override readonly name = "CallSettledError";
  readonly id: string | number;
  readonly state: SettledState;
  readonly method: string | undefined;

  constructor(settled: SettledCall) {
    super(`${String(settled.id)} was settled elsewhere (${settled.state})`);
    this.id = settled.id;
    this.state = settled.state;
    this.method = settled.method;
  }
}

/**
 * The server answered with an error status (or not at all, after the retries). `code` is the
 * server's `error.code` (`invalid_result`, `already_answered`, ...), or `network_error` / `timeout`
 * when no answer came. Subclasses name the cases an app treats apart.
 */
export class AssistantApiError extends Error {
  override readonly name: string = "AssistantApiError";
  /** The HTTP status; 0 when the server could not be reached. */
  readonly status: number;
  readonly code: string;
  /** Sending the same request again later may succeed (429, 503, no connection). */
  readonly retryable: boolean;
  /** How long the server asked to wait (`Retry-After`), when it did. */
  readonly retryAfterMs: number | undefined;
  /** How many times the request was sent. */
  readonly attempts: number;
  /** What went wrong underneath (the network error), when something did. */
  readonly cause: unknown;
  /**
   * The JSON-RPC response that was being sent, when the error comes from answering a request
   * (`handleMessage` sets it): when `retryable`, send it again later with `respond()`.
   */
  rpcResponse: JsonRpcResponse | undefined;

  constructor(
    message: string,
    init: { status: number; code: string; retryable?: boolean; retryAfterMs?: number; attempts?: number; cause?: unknown },
  ) {
    super(message);
    this.status = init.status;
    this.code = init.code;
    this.retryable = init.retryable ?? false;
    this.retryAfterMs = init.retryAfterMs;
    this.attempts = init.attempts ?? 1;
    this.cause = init.cause;
  }
}

/**
 * 422. For an answer (`invalid_result`): the result does not fit the method's result schema; the
 * call stays pending, so fix the result and send it again. For a tool declaration: a parameters or
 * result schema is not a valid JSON Schema; the previous declaration stays in place.
 */
export class UnprocessableError extends AssistantApiError {
  override readonly name = "UnprocessableError";
}

/**
 * 409. For an answer (`already_answered`): a different answer to this call was recorded first, and
 * that one counts. For a tool declaration: a tool's name clashes with a server or built-in tool.
 */
export class ConflictError extends AssistantApiError {
  override readonly name = "ConflictError";
}

/** 401 even with a token fetched anew (`getToken({ refresh: true })`). */
export class UnauthorizedError extends AssistantApiError {
  override readonly name = "UnauthorizedError";
}

/** 429 and the retries ran out (or `Retry-After` is beyond the retry budget): send it again later. */
export class RateLimitedError extends AssistantApiError {
  override readonly name = "RateLimitedError";
}

/** 502/503/504, a timeout or no connection, and the retries ran out: send it again later. */
export class UnavailableError extends AssistantApiError {
  override readonly name = "UnavailableError";
}

/**
 * Whether `value` is an error of `kind` (or of a kind derived from it), narrowed to that type:
 * `if (isErrorOf(error, AssistantApiError) && error.retryable) ...`.
 */
export function isErrorOf<T extends Error>(value: unknown, kind: abstract new (...args: never[]) => T): value is T {
  return typeof value === "object" && value !== null && Object.prototype.isPrototypeOf.call(kind.prototype, value);
}
