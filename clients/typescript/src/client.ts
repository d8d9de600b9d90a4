import {
  type CallInfo,
  type PendingRequest,
  type SettledCall,
  parseSettled,
  pendingRequest,
  readCall,
} from "./calls.js";
import { AgentRpcParseError, AssistantApiError, CallSettledError, DeviceError, isErrorOf } from "./errors.js";
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
import { InFlight } from "./inflight.js";
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

/** What a handler gets besides the request. */
export interface HandlerContext {
  /**
   * Aborts when the request's call settles elsewhere (another device of the user answered it, it
   * expired, the user wrote again): close its dialog then. Its `reason` is a
   * {@link CallSettledError}. A handler that ends after it aborted is not answered.
   */
  signal: AbortSignal;
}

/** Runs one method on the device: returns its result, or throws a {@link DeviceError}. */
export type Handler<P = Record<string, unknown>, R = unknown> = (
  params: P,
  request: AgentRpcRequest<string, P>,
  context: HandlerContext,
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
  /**
   * This device's id (at most 128 characters, stable across app starts, e.g. the app's install id),
   * for users with several devices: each device's tool declaration (`declareTools`) is then kept
   * apart from the others', and the assistant is offered what any of them declared. Without it the
   * user has one declaration, whichever device made it last.
   */
  deviceId?: string;
  /**
   * Told once per call when a settled update of its request's message reaches
   * {@link AssistantClient.handleMessage} (answered by this or another device, expired, superseded,
   * cancelled): close anything still showing it.
   */
  onSettled?: (settled: SettledCall) => void;
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

/** The result of {@link AssistantClient.handleMessage} and {@link AssistantClient.handleRequest}. */
export type HandleResult =
  /** Not a request for the phone (any other chat message). */
  | { status: "ignored"; reason: "not_a_request" }
  /**
   * A request for another member of the channel: it mentions them, not the signed-in user
   * ({@link AssistantClientOptions.userId}). Their phone answers it; nothing ran and nothing was sent.
   */
  | { status: "ignored"; reason: "not_for_me"; request: AgentRpcRequest }
  /**
   * The call settled elsewhere: the message was a request's settled update (then without
   * `request`), or the request's call had settled before its handler ended (with `request`; the
   * handler's signal aborted and nothing was posted).
   */
  | (SettledCall & { status: "settled"; request?: AgentRpcRequest })
  | (ToolMessageOutcome & { request: AgentRpcRequest; response: JsonRpcResponse });

/** `PUT /api/v1/agent/client-tools` answered 200. */
export interface DeclareToolsResult {
  status: "ok";
  /** How many tools are declared now. */
  tools: number;
}

const TOOL_MESSAGE_PATH = "/api/v1/agent/tool-message";
const CLIENT_TOOLS_PATH = "/api/v1/agent/client-tools";
const CALLS_PATH = "/api/v1/agent/calls";
const MAX_DEVICE_ID = 128;
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

/** The key requests are remembered by: the same id from a message and from `pending()` is one request. */
function keyOf(id: JsonRpcId): string {
  return `${typeof id}:${String(id)}`;
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
  private readonly settled = new Map<string, SettledCall>();
  private readonly inFlight = new InFlight();
  private readonly parseOptions: ParseOptions;
  private readonly deviceId: string | undefined;
  private readonly onSettled: ((settled: SettledCall) => void) | undefined;
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
    const deviceId: unknown = options.deviceId;
    if (deviceId !== undefined && (typeof deviceId !== "string" || deviceId === "" || deviceId.length > MAX_DEVICE_ID)) {
      throw new TypeError(`deviceId must be a non-empty string of at most ${MAX_DEVICE_ID} characters`);
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
    this.onSettled = options.onSettled;
    this.userId = options.userId;
    this.deviceId = options.deviceId;
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
   *
   * The handler gets `signal` (by default one that never aborts). Once it aborted, whatever the
   * handler ended with is not for sending, and is not reported to `onHandlerError`.
   */
  async dispatch(request: AgentRpcRequest, signal: AbortSignal = new AbortController().signal): Promise<JsonRpcResponse> {
    const handler = this.handlers.get(request.method) as Handler<unknown, unknown> | undefined;
    if (handler === undefined) {
      return failure(request.id, {
        code: ErrorCodes.MethodNotFound,
        message: "Method not found",
        data: { method: request.method },
      });
    }
    try {
      const result = await handler(request.params, request as AgentRpcRequest<string, unknown>, { signal });
      return { jsonrpc: "2.0", id: request.id, result: result === undefined ? null : result };
    } catch (error) {
      if (isErrorOf(error, DeviceError)) return failure(request.id, error.toJsonRpcError());
      if (signal.aborted) return failure(request.id, { code: ErrorCodes.InternalError, message: "Aborted" });
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
    if (answer.status === 409 || answer.status === 410) {
      // settled elsewhere: a handler still running for it (the app's own, say) has nothing left to do
      const { code } = errorOf(answer);
      const state = answer.status === 409 ? "answered" : code === "call_expired" ? "expired" : "superseded";
      this.inFlight.abort(keyOf(response.id), new CallSettledError({ id: response.id, state, method: undefined }));
    }
    if (answer.status === 404 || answer.status === 410) {
      const { code, message } = errorOf(answer);
      return { status: "gone", reason: code, httpStatus: answer.status, message };
    }
    if (answer.status === 403) return { status: "not_yours", message: errorOf(answer).message };
    throw this.unexpected(answer, what);
  }

  /**
   * Everything for one received chat message: parse it, run the handler, post the answer.
   * Pass every message the app receives and every update of one (Sendbird's `onMessageReceived`
   * and `onMessageUpdated`).
   *
   * - Not a request for the phone: `{status: "ignored", reason: "not_a_request"}`.
   * - A request's settled update (its call left `pending`: answered by this or another device,
   *   expired, superseded, cancelled): `{status: "settled", id, state, method}`. A handler still
   *   running for it is aborted (its `signal`) and its request not answered; `onSettled` is told
   *   (once per call).
   * - A request: {@link handleRequest}.
   * - An `agent-rpc` message that cannot be read: when its id can be read it is answered -32600
   *   Invalid Request (so the assistant does not wait for it), then the {@link AgentRpcParseError}
   *   is thrown either way. A settled update that cannot be read throws it too.
   */
  handleMessage(message: unknown): Promise<HandleResult> {
    let request: AgentRpcRequest | null;
    let settled: SettledCall | null = null;
    try {
      request = this.parse(message);
      if (request === null) settled = parseSettled(message, this.parseOptions);
    } catch (error) {
      return this.answerUnreadable(error);
    }
    if (settled !== null) return Promise.resolve({ ...this.settle(settled), status: "settled" });
    if (request === null) return Promise.resolve({ status: "ignored", reason: "not_a_request" });
    return this.handleRequest(request);
  }

  /**
   * Run a request as {@link handleMessage} runs one from a message: a request from
   * {@link pending}, typically. The same request from a message and from `pending()` runs its
   * handler once.
   *
   * - A request that mentions another user than the signed-in one (the `userId` option): `{status:
   *   "ignored", reason: "not_for_me", request}`; the handler does not run and nothing is posted.
   *   In a group channel every member's app receives each request; only the mentioned user's acts.
   * - A request handled before (or being handled) is answered once: the later call gets the same
   *   result and the handler does not run twice. One whose answer failed may be handled again:
   *   after a retryable failure (the server unreachable, rate limits) the same answer is sent
   *   again without running the handler; after any other (such as 422) the handler runs again.
   * - A request whose call this client saw settle: `{status: "settled", ..., request}`, nothing runs.
   *   When the call settles while the handler runs, its signal aborts, and whatever the handler
   *   ends with is not posted: the same result.
   * - Otherwise the outcome of {@link respond}, with the request and the response sent; it throws
   *   what {@link respond} throws, with the response in the error's `rpcResponse`.
   */
  handleRequest(request: AgentRpcRequest): Promise<HandleResult> {
    if (!this.isForMe(request)) return Promise.resolve({ status: "ignored", reason: "not_for_me", request });
    const key = keyOf(request.id);
    const earlier = this.handled.get(key);
    if (earlier !== undefined) return earlier;
    const settled = this.settled.get(key);
    if (settled !== undefined) return Promise.resolve({ ...settled, status: "settled", request });
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
    let response = this.undelivered.get(key);
    if (response === undefined) {
      const signal = this.inFlight.start(key, request);
      try {
        response = await this.dispatch(request, signal);
      } finally {
        this.inFlight.end(key);
      }
      if (signal.aborted) {
        const reason: unknown = signal.reason;
        const settled = isErrorOf(reason, CallSettledError)
          ? { id: reason.id, state: reason.state, method: reason.method ?? request.method }
          : { id: request.id, state: "answered", method: request.method };
        return { ...settled, status: "settled", request };
      }
    }
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

  /** A settled update: abort the call's handler, tell `onSettled` the first time. */
  private settle(settled: SettledCall): SettledCall {
    const key = keyOf(settled.id);
    const first = !this.settled.has(key);
    remember(this.settled, key, settled);
    this.inFlight.abort(key, new CallSettledError(settled));
    if (first) {
      try {
        this.onSettled?.(settled);
      } catch {
        // a failing listener must not fail the message's handling
      }
    }
    return settled;
  }

  /**
   * The requests whose handler is running now (a dialog waiting for the user, say), oldest first;
   * one whose call settles elsewhere leaves the list at once. The same array until it changes.
   * A UI lists these; see {@link subscribe}.
   */
  readonly running = (): readonly AgentRpcRequest[] => this.inFlight.requests();

  /** Call `listener` whenever {@link running} changes; returns the function that stops it. */
  readonly subscribe = (listener: () => void): (() => void) => this.inFlight.subscribe(listener);

  /**
   * The user's open requests (`GET /api/v1/agent/calls`), newest first, at most 100: run each with
   * {@link handleRequest}, after sign-in and whenever the app returns to the foreground, so a
   * request that came while the app was closed (or one it was killed in the middle of) is shown.
   * Requests it runs already, or answered, are not run again.
   */
  async pending(): Promise<PendingRequest[]> {
    const answer = await this.transport.send("GET", CALLS_PATH);
    const body = answer.body as { calls?: unknown } | undefined;
    if (answer.status !== 200 || body === undefined || !Array.isArray(body.calls)) {
      throw this.unexpected(answer, "reading the open requests");
    }
    const me = this.signedIn();
    const requests: PendingRequest[] = [];
    for (const raw of body.calls as unknown[]) {
      const call = readCall(raw);
      if (call === undefined) throw this.unexpected(answer, "reading the open requests");
      if (call.state === "pending") requests.push(pendingRequest(call, raw, me));
    }
    return requests;
  }

  /**
   * One call's state (`GET /api/v1/agent/calls/{id}`): `pending`, `answered`, `expired`,
   * `superseded` or `cancelled`, while the server remembers it (a day after it settled); `null`
   * when it does not (404). Throws {@link AssistantApiError} (403 `not_your_call`, 401, 429, ...).
   */
  async call(id: JsonRpcId): Promise<CallInfo | null> {
    const answer = await this.transport.send("GET", `${CALLS_PATH}/${encodeURIComponent(String(id))}`);
    if (answer.status === 404) return null;
    const call = answer.status === 200 ? readCall(answer.body) : undefined;
    if (call === undefined) throw this.unexpected(answer, `reading call ${String(id)}`);
    return call;
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
   * replaces the previous declaration (this device's, with the `deviceId` option: other devices'
   * declarations stay). Register a handler for each tool's `method` too.
   * Throws {@link ConflictError} (409: a name clashes with a server or built-in tool),
   * {@link UnprocessableError} (422: a schema is not a valid JSON Schema), or
   * {@link AssistantApiError} (400 a malformed declaration, 413 too large); the previous
   * declaration stays in place then.
   */
  async declareTools(declaration: ClientToolsDeclaration): Promise<DeclareToolsResult> {
    const sent = this.deviceId === undefined ? declaration : { ...declaration, device_id: this.deviceId };
    const answer = await this.transport.send("PUT", CLIENT_TOOLS_PATH, sent);
    const body = answer.body as { status?: unknown; tools?: unknown } | undefined;
    if (answer.status === 200 && body?.status === "ok" && typeof body.tools === "number") {
      return { status: "ok", tools: body.tools };
    }
    throw this.unexpected(answer, "declaring tools");
  }

  /**
   * The current declaration (`GET /api/v1/agent/client-tools`; this device's, with the `deviceId`
   * option); `{tools: []}` when none.
   */
  async getTools(): Promise<ClientToolsDeclaration> {
    const answer = await this.transport.send("GET", this.clientToolsPath());
    const body = answer.body as (ClientToolsDeclaration & { device_id?: unknown }) | undefined;
    if (answer.status === 200 && body !== undefined && Array.isArray(body.tools)) {
      const { device_id: _deviceId, ...declaration } = body; // as declareTools was given it
      return declaration;
    }
    throw this.unexpected(answer, "reading the declared tools");
  }

  /** Remove the declaration (`DELETE /api/v1/agent/client-tools`; only this device's, with `deviceId`). */
  async clearTools(): Promise<void> {
    const answer = await this.transport.send("DELETE", this.clientToolsPath());
    if (answer.status === 204 || answer.status === 200) return;
    throw this.unexpected(answer, "removing the declared tools");
  }

  /** The client-tools path, for this device when it has an id. */
  private clientToolsPath(): string {
    return this.deviceId === undefined
      ? CLIENT_TOOLS_PATH
      : `${CLIENT_TOOLS_PATH}?device_id=${encodeURIComponent(this.deviceId)}`;
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
