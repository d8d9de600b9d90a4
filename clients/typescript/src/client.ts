import { AgentRpcParseError, AssistantApiError, DeviceError, isErrorOf } from "./errors.js";
import {
  type ApiResponse,
  type Clock,
  DEFAULT_RETRY_POLICY,
  type FetchLike,
  type GetToken,
  type RetryPolicy,
  SYSTEM_CLOCK,
  Transport,
  apiError,
  errorOf,
} from "./http.js";
import { type AgentRpcRequest, type ParseOptions, parseAgentRpc } from "./parse.js";
import {
  type BuiltinMethods,
  type ClientToolsDeclaration,
  ErrorCodes,
  type JsonRpcErrorObject,
  type JsonRpcFailure,
  type JsonRpcId,
  type JsonRpcResponse,
  type MethodSpec,
} from "./protocol.js";

/** Runs one method on the device: returns its result, or throws a {@link DeviceError}. */
export type Handler<P = Record<string, unknown>, R = unknown> = (
  params: P,
  request: AgentRpcRequest<string, P>,
) => R | Promise<R>;

export interface AssistantClientOptions {
  /** The assistant server, e.g. `https://assistant.example.com` (no trailing path). */
  baseUrl: string;
  /**
   * The signed-in user's token (a JWT whose `sub` is their Sendbird user id). Called before each
   * request; with `{ refresh: true }` after a 401, when a cached token should be renewed.
   */
  getToken: GetToken;
  /** Whose `agent-rpc` messages are requests; see {@link ParseOptions.botUserId}. */
  botUserId?: string | null;
  /**
   * Required: the signed-in user's Sendbird user id (the token's `sub`), or a function that returns
   * it now (e.g. `() => auth.userId`, for a client made before sign-in). In a group channel every
   * member's app receives each request; {@link AssistantClient.handleMessage} acts only on those
   * that mention this user (or nobody: servers from before mentions) and ignores the rest as
   * `not_for_me`. While the function returns `null` / `undefined` (nobody signed in), requests that
   * mention someone are ignored too.
   */
  userId: string | (() => string | null | undefined);
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** Overrides of {@link DEFAULT_RETRY_POLICY}. */
  retry?: Partial<RetryPolicy>;
  /** Where the time comes from (tests); default the system's. */
  clock?: Partial<Clock>;
  /**
   * Told about a handler that threw something other than a {@link DeviceError} (its request is
   * answered with -32603 Internal error). Report it to your crash reporting here.
   */
  onHandlerError?: (error: unknown, request: AgentRpcRequest) => void;
}

/** What the server made of an answer. None of these needs more from the app. */
export type ToolMessageOutcome =
  /** 202: recorded; `remaining` other requests of the turn are still open. */
  | { status: "accepted"; remaining: number }
  /** 202: recorded, the last one: the assistant's answer will appear in the channel. */
  | { status: "resuming" }
  /** 200: this very answer was recorded before (a retry): nothing runs twice. */
  | { status: "duplicate" }
  /**
   * 404 `unknown_call` or 410 `call_expired` / `call_superseded`: the answer is no longer wanted
   * (the user wrote again, the call expired, or it was settled over a day ago). Drop it.
   */
  | { status: "gone"; reason: string; httpStatus: number; message: string }
  /** 403 `not_your_call`: the request was for another member of the channel. Drop it. */
  | { status: "not_yours"; message: string };

/** The result of {@link AssistantClient.handleMessage}. */
export type HandleResult =
  /** Not a request for the phone (any other chat message). */
  | { status: "ignored"; reason: "not_a_request" }
  /**
   * A request for another member of the channel: it mentions them, not the signed-in user
   * ({@link AssistantClientOptions.userId}). Their phone answers it; nothing ran and nothing was sent.
   */
  | { status: "ignored"; reason: "not_for_me"; request: AgentRpcRequest }
  | (ToolMessageOutcome & { request: AgentRpcRequest; response: JsonRpcResponse });

/** `PUT /api/v1/agent/client-tools` answered 200. */
export interface DeclareToolsResult {
  status: "ok";
  /** How many tools are declared now. */
  tools: number;
}

const TOOL_MESSAGE_PATH = "/api/v1/agent/tool-message";
const CLIENT_TOOLS_PATH = "/api/v1/agent/client-tools";
const MAX_ERROR_MESSAGE = 1000;
const REMEMBERED_REQUESTS = 256;

function defaultFetch(): FetchLike {
  const global = globalThis as { fetch?: FetchLike };
  if (typeof global.fetch !== "function") {
    throw new TypeError("no global fetch: pass one as the fetch option");
  }
  return (url, init) => (globalThis as unknown as { fetch: FetchLike }).fetch(url, init);
}

/** Keep `value` under `key`, forgetting the oldest entry beyond {@link REMEMBERED_REQUESTS}. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > REMEMBERED_REQUESTS) map.delete(map.keys().next().value as string);
}

function failure(id: JsonRpcId, error: JsonRpcErrorObject): JsonRpcFailure {
  const message = error.message.length > MAX_ERROR_MESSAGE ? error.message.slice(0, MAX_ERROR_MESSAGE) : error.message;
  return { jsonrpc: "2.0", id, error: { ...error, message } };
}

/**
 * Speaks the device protocol for one signed-in user: reads `agent-rpc` requests from chat messages,
 * runs the registered handler, posts the answer, and declares the app's own tools.
 *
 * `Methods` types the handlers: the built-in methods by default; widen it with the methods of the
 * tools the app declares:
 *
 * ```ts
 * type AppMethods = BuiltinMethods & {
 *   "location.getCurrent": MethodSpec<{ accuracy?: string }, { latitude: number; longitude: number }>;
 * };
 * const assistant = new AssistantClient<AppMethods>({ baseUrl, getToken, userId: () => auth.userId });
 * ```
 */
export class AssistantClient<Methods extends { [K in keyof Methods]: MethodSpec } = BuiltinMethods> {
  private readonly transport: Transport;
  private readonly handlers = new Map<string, Handler<never, unknown>>();
  private readonly handled = new Map<string, Promise<HandleResult>>();
  private readonly undelivered = new Map<string, JsonRpcResponse>();
  private readonly parseOptions: ParseOptions;
  private readonly onHandlerError: ((error: unknown, request: AgentRpcRequest) => void) | undefined;
  private readonly userId: string | (() => string | null | undefined);

  constructor(options: AssistantClientOptions) {
    if (!/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError(`baseUrl must be an http(s) URL, not ${JSON.stringify(options.baseUrl)}`);
    }
    const userId: unknown = options.userId;
    if (!(typeof userId === "function" || (typeof userId === "string" && userId !== ""))) {
      throw new TypeError(
        "userId is required: the signed-in user's Sendbird user id, or a function returning it " +
          "(e.g. () => auth.userId). In a group channel every member's app receives each request; " +
          "without it this app would act on requests meant for another member.",
      );
    }
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      getToken: options.getToken,
      fetch: options.fetch ?? defaultFetch(),
      retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
      clock: { ...SYSTEM_CLOCK, ...options.clock },
    });
    this.parseOptions = options.botUserId === undefined ? {} : { botUserId: options.botUserId };
    this.onHandlerError = options.onHandlerError;
    this.userId = options.userId;
  }

  /** The signed-in user per the `userId` option, or `undefined` while nobody is signed in. */
  private signedIn(): string | undefined {
    const id = typeof this.userId === "function" ? this.userId() : this.userId;
    return typeof id === "string" && id !== "" ? id : undefined;
  }

  /**
   * Whether this user's phone is to answer `request`: it mentions them, or nobody (a server from
   * before mentions). While nobody is signed in (`userId` returns nothing), only the latter.
   */
  isForMe(request: AgentRpcRequest): boolean {
    return request.recipient === undefined || request.recipient === this.signedIn();
  }

  /**
   * Run `handler` for requests of `method`; it returns the result or throws a {@link DeviceError}.
   * Registering a method again replaces its handler.
   */
  register<M extends keyof Methods & string>(
    method: M,
    handler: Handler<Methods[M]["params"], Methods[M]["result"]>,
  ): this;
  /** A method not in `Methods` (e.g. of a declared tool): untyped params and result. */
  register<M extends string>(method: M extends keyof Methods ? never : M, handler: Handler): this;
  register(method: string, handler: Handler<never, unknown>): this {
    this.handlers.set(method, handler);
    return this;
  }

  /** Stop handling `method`: its requests are answered -32601 Method not found. */
  unregister(method: string): this {
    this.handlers.delete(method);
    return this;
  }

  /** The methods with a handler. */
  methods(): string[] {
    return [...this.handlers.keys()];
  }

  /** {@link parseAgentRpc} with this client's `botUserId`. */
  parse(message: unknown): AgentRpcRequest | null {
    return parseAgentRpc(message, this.parseOptions);
  }

  /**
   * Run the request's handler and build the JSON-RPC response; never throws.
   *
   * - the handler's return value → `result` (`undefined` is sent as `null`);
   * - a thrown {@link DeviceError} → its `code`, `message` (cut to 1000 characters) and `data`;
   * - no handler for the method → -32601 `Method not found`, `data: {method}`;
   * - anything else thrown → -32603 `Internal error` (the exception's text stays on the phone:
   *   it goes to `onHandlerError`, not to the assistant).
   */
  async dispatch(request: AgentRpcRequest): Promise<JsonRpcResponse> {
    const handler = this.handlers.get(request.method) as Handler<unknown, unknown> | undefined;
    if (handler === undefined) {
      return failure(request.id, {
        code: ErrorCodes.MethodNotFound,
        message: "Method not found",
        data: { method: request.method },
      });
    }
    try {
      const result = await handler(request.params, request as AgentRpcRequest<string, unknown>);
      return { jsonrpc: "2.0", id: request.id, result: result === undefined ? null : result };
    } catch (error) {
      if (isErrorOf(error, DeviceError)) return failure(request.id, error.toJsonRpcError());
      try {
        this.onHandlerError?.(error, request);
      } catch {
        // a failing reporter must not keep the request unanswered
      }
      return failure(request.id, { code: ErrorCodes.InternalError, message: "Internal error" });
    }
  }

  /**
   * Post a JSON-RPC response to `POST /api/v1/agent/tool-message`.
   *
   * Retries 429/502/503/504, timeouts and network errors (see {@link RetryPolicy}); sending the same
   * answer again is always safe. Resolves with the outcome (including `gone` and `not_yours`,
   * which need nothing from the app). Throws:
   * - {@link UnprocessableError} (422 `invalid_result`): the result does not fit the method's
   *   schema; the call stays pending: fix the result and respond again;
   * - {@link ConflictError} (409 `already_answered`): a different answer was recorded first;
   * - {@link UnauthorizedError} (401, also with a refreshed token);
   * - {@link RateLimitedError} / {@link UnavailableError}: the retries ran out; `retryable` is
   *   true: respond with the same body later (the call waits an hour by default);
   * - {@link AssistantApiError} for the rest (400 a malformed body, 413 too large).
   */
  async respond(response: JsonRpcResponse): Promise<ToolMessageOutcome> {
    const answer = await this.transport.send("POST", TOOL_MESSAGE_PATH, response);
    const what = `answering ${String(response.id)}`;
    const body = (answer.body ?? {}) as { status?: unknown; remaining?: unknown };
    if (answer.status === 202 && body.status === "accepted") {
      return { status: "accepted", remaining: typeof body.remaining === "number" ? body.remaining : 0 };
    }
    if (answer.status === 202 && body.status === "resuming") return { status: "resuming" };
    if (answer.status === 200 && body.status === "duplicate") return { status: "duplicate" };
    if (answer.status === 404 || answer.status === 410) {
      const { code, message } = errorOf(answer);
      return { status: "gone", reason: code, httpStatus: answer.status, message };
    }
    if (answer.status === 403) return { status: "not_yours", message: errorOf(answer).message };
    throw this.unexpected(answer, what);
  }

  /**
   * Everything for one received chat message: parse it, run the handler, post the answer.
   * Pass every message the app receives (Sendbird's `onMessageReceived`).
   *
   * - Not a request for the phone: `{status: "ignored", reason: "not_a_request"}`.
   * - A request that mentions another user than the signed-in one (the `userId` option): `{status:
   *   "ignored", reason: "not_for_me", request}`; the handler does not run and nothing is posted.
   *   In a group channel every member's app receives each request; only the mentioned user's acts.
   * - A request delivered again while (or after) it is handled is answered once: the later call
   *   gets the same result and the handler does not run twice. One whose answer failed may be
   *   handled again: after a retryable failure (the server unreachable, rate limits) the same
   *   answer is sent again without running the handler; after any other (such as 422) the
   *   handler runs again.
   * - An `agent-rpc` message that cannot be read: when its id can be read it is answered -32600
   *   Invalid Request (so the assistant does not wait for it), then the {@link AgentRpcParseError}
   *   is thrown either way.
   * - Otherwise the outcome of {@link respond}, with the request and the response sent; it throws
   *   what {@link respond} throws, with the response in the error's `rpcResponse`.
   */
  handleMessage(message: unknown): Promise<HandleResult> {
    let request: AgentRpcRequest | null;
    try {
      request = this.parse(message);
    } catch (error) {
      return this.answerUnreadable(error);
    }
    if (request === null) return Promise.resolve({ status: "ignored", reason: "not_a_request" });
    if (!this.isForMe(request)) return Promise.resolve({ status: "ignored", reason: "not_for_me", request });
    const key = `${typeof request.id}:${String(request.id)}`;
    const earlier = this.handled.get(key);
    if (earlier !== undefined) return earlier;
    const handling = this.handle(request, key);
    remember(this.handled, key, handling);
    handling.catch(() => {
      if (this.handled.get(key) === handling) this.handled.delete(key);
    });
    return handling;
  }

  private async handle(request: AgentRpcRequest, key: string): Promise<HandleResult> {
    // An answer that could not be delivered is sent again as it was: the handler (a dialog the
    // user already answered, say) does not run twice.
    const response = this.undelivered.get(key) ?? (await this.dispatch(request));
    try {
      const outcome = await this.respond(response);
      this.undelivered.delete(key);
      return { ...outcome, request, response };
    } catch (error) {
      if (isErrorOf(error, AssistantApiError)) {
        error.rpcResponse = response;
        if (error.retryable) remember(this.undelivered, key, response);
        else this.undelivered.delete(key);
      }
      throw error;
    }
  }

  private async answerUnreadable(error: unknown): Promise<never> {
    if (isErrorOf(error, AgentRpcParseError) && error.id !== undefined) {
      try {
        await this.respond(failure(error.id, { code: ErrorCodes.InvalidRequest, message: "Invalid Request" }));
      } catch {
        // the parse error below is the news; the answer was a courtesy
      }
    }
    throw error;
  }

  /**
   * Declare the app's own device tools for this user (`PUT /api/v1/agent/client-tools`); it
   * replaces the previous declaration. Register a handler for each tool's `method` too.
   * Throws {@link ConflictError} (409: a name clashes with a server or built-in tool),
   * {@link UnprocessableError} (422: a schema is not a valid JSON Schema), or
   * {@link AssistantApiError} (400 a malformed declaration, 413 too large); the previous
   * declaration stays in place then.
   */
  async declareTools(declaration: ClientToolsDeclaration): Promise<DeclareToolsResult> {
    const answer = await this.transport.send("PUT", CLIENT_TOOLS_PATH, declaration);
    const body = answer.body as { status?: unknown; tools?: unknown } | undefined;
    if (answer.status === 200 && body?.status === "ok" && typeof body.tools === "number") {
      return { status: "ok", tools: body.tools };
    }
    throw this.unexpected(answer, "declaring tools");
  }

  /** The user's current declaration (`GET /api/v1/agent/client-tools`); `{tools: []}` when none. */
  async getTools(): Promise<ClientToolsDeclaration> {
    const answer = await this.transport.send("GET", CLIENT_TOOLS_PATH);
    const body = answer.body as ClientToolsDeclaration | undefined;
    if (answer.status === 200 && body !== undefined && Array.isArray(body.tools)) return body;
    throw this.unexpected(answer, "reading the declared tools");
  }

  /** Remove the user's declaration (`DELETE /api/v1/agent/client-tools`). */
  async clearTools(): Promise<void> {
    const answer = await this.transport.send("DELETE", CLIENT_TOOLS_PATH);
    if (answer.status === 204 || answer.status === 200) return;
    throw this.unexpected(answer, "removing the declared tools");
  }

  private unexpected(answer: ApiResponse, what: string): AssistantApiError {
    if (answer.status >= 400) return apiError(answer, what);
    return new AssistantApiError(`${what}: unexpected answer ${answer.status} ${JSON.stringify(answer.body)}`, {
      status: answer.status,
      code: "unexpected_response",
      attempts: answer.attempts,
    });
  }
}
