import { type Answer, AnswerBubbles } from "./answers.js";
import type { StandingApproval } from "./approvals.js";
import { type CallInfo, type PendingRequest, type SettledCall, type SettledState, parseSettled } from "./calls.js";
import { type DeclareToolsResult, Endpoints, type StopResult, type ToolMessageOutcome } from "./endpoints.js";
import type { AssistantClientOptions, Handler, HandleResult } from "./options.js";
import { AgentRpcParseError, AssistantApiError, CallSettledError, ConflictError, DeviceError, isErrorOf } from "./errors.js";
import { DEFAULT_RETRY_POLICY, type FetchLike, SYSTEM_CLOCK, Transport } from "./http.js";
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
  private readonly api: Endpoints;
  private readonly handlers = new Map<string, Handler<never, unknown>>();
  private readonly handled = new Map<string, Promise<HandleResult>>();
  private readonly undelivered = new Map<string, JsonRpcResponse>();
  private readonly settled = new Map<string, SettledCall>();
  private readonly inFlight = new InFlight();
  private readonly answerBubbles: AnswerBubbles;
  private readonly parseOptions: ParseOptions;
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
          "(e.g. () => auth.userId). A request meant for another member of a group channel may reach " +
          "this app; without it this app would act on requests meant for another member.",
      );
    }
    const deviceId: unknown = options.deviceId;
    if (deviceId !== undefined && (typeof deviceId !== "string" || deviceId === "" || deviceId.length > MAX_DEVICE_ID)) {
      throw new TypeError(`deviceId must be a non-empty string of at most ${MAX_DEVICE_ID} characters`);
    }
    const transport = new Transport({
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
    this.api = new Endpoints(transport, options.deviceId);
    this.answerBubbles = new AnswerBubbles({
      ...this.parseOptions,
      ...(options.answerStallMs === undefined ? {} : { stallMs: options.answerStallMs }),
      ...(options.onAnswer === undefined ? {} : { onAnswer: options.onAnswer }),
      ...(options.clock?.now === undefined ? {} : { now: options.clock.now }),
    });
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
    try {
      const outcome = await this.api.answer(response);
      if (outcome.status === "gone" && outcome.httpStatus === 410) {
        this.settledElsewhere(response.id, outcome.reason === "call_expired" ? "expired" : "superseded");
      }
      return outcome;
    } catch (error) {
      if (isErrorOf(error, ConflictError)) this.settledElsewhere(response.id, "answered");
      throw error;
    }
  }

  /** A post found the call settled: a handler still running for it (the app's own, say) has nothing left to do. */
  private settledElsewhere(id: JsonRpcId, state: SettledState): void {
    this.inFlight.abort(keyOf(id), new CallSettledError({ id, state, method: undefined }));
  }

  /**
   * Everything for one received chat message: parse it, run the handler, post the answer.
   * Pass every message the app receives and every update of one (Sendbird's `onMessageReceived`
   * and `onMessageUpdated`).
   *
   * - Not a request for the phone: `{status: "ignored", reason: "not_a_request"}`. When it is an
   *   answer of the assistant (a plain message from it, or an update of one that streams) the
   *   result has `answer` (its text now, `streaming`, `first`), `onAnswer` is told, and
   *   {@link answers} lists it.
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
    if (request === null) {
      const answer = this.answerBubbles.receive(message);
      return Promise.resolve({ status: "ignored", reason: "not_a_request", ...(answer === null ? {} : { answer }) });
    }
    return this.handleRequest(request);
  }

  /**
   * Run a request as {@link handleMessage} runs one from a message: a request from
   * {@link pending}, typically. The same request from a message and from `pending()` runs its
   * handler once.
   *
   * - A request that mentions another user than the signed-in one (the `userId` option): `{status:
   *   "ignored", reason: "not_for_me", request}`; the handler does not run and nothing is posted.
   *   Only the mentioned user's app acts (the server posts a group's requests in the asking
   *   person's 1:1 channel; one that reaches another member is still ignored).
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
   * The assistant's answers that reached {@link handleMessage} (of `channelUrl` only, when given),
   * oldest first, each at its latest text, `streaming` while it still grows: a chat's bubbles.
   * The same array until one changes; see {@link subscribeAnswers}.
   */
  readonly answers = (channelUrl?: string): readonly Answer[] => this.answerBubbles.list(channelUrl);

  /** Call `listener` whenever {@link answers} changes; returns the function that stops it. */
  readonly subscribeAnswers = (listener: () => void): (() => void) => this.answerBubbles.subscribe(listener);

  /**
   * The user's open requests (`GET /api/v1/agent/calls`), newest first, at most 100: run each with
   * {@link handleRequest}, after sign-in and whenever the app returns to the foreground, so a
   * request that came while the app was closed (or one it was killed in the middle of) is shown.
   * Requests it runs already, or answered, are not run again.
   */
  pending(): Promise<PendingRequest[]> {
    return this.api.pending(this.signedIn());
  }

  /**
   * One call's state (`GET /api/v1/agent/calls/{id}`): `pending`, `answered`, `expired`,
   * `superseded` or `cancelled`, while the server remembers it (a day after it settled); `null`
   * when it does not (404). Throws {@link AssistantApiError} (403 `not_your_call`, 401, 429, ...).
   */
  call(id: JsonRpcId): Promise<CallInfo | null> {
    return this.api.call(id);
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
  declareTools(declaration: ClientToolsDeclaration): Promise<DeclareToolsResult> {
    return this.api.declareTools(declaration);
  }

  /**
   * The current declaration (`GET /api/v1/agent/client-tools`; this device's, with the `deviceId`
   * option); `{tools: []}` when none.
   */
  getTools(): Promise<ClientToolsDeclaration> {
    return this.api.getTools();
  }

  /** Remove the declaration (`DELETE /api/v1/agent/client-tools`; only this device's, with `deviceId`). */
  clearTools(): Promise<void> {
    return this.api.clearTools();
  }

  /**
   * The user's standing approvals (`GET /api/v1/agent/approvals`), oldest first: the tools they
   * said "always" to in a confirmation dialog (`{confirmed: true, remember: "always"}`), whose
   * calls now run without asking them, on every device. For a settings screen.
   * Throws {@link AssistantApiError} (401, 429, 503 once the retries ran out, ...).
   */
  approvals(): Promise<StandingApproval[]> {
    return this.api.approvals();
  }

  /**
   * End the standing approval of `tool` (`DELETE /api/v1/agent/approvals/{tool}`): the user is
   * asked again before its next call. Resolves whether or not there was one; throws
   * {@link AssistantApiError} (401, 429, ...), and a `TypeError` for an empty tool name.
   */
  endApproval(tool: string): Promise<void> {
    if (typeof tool !== "string" || tool === "") {
      return Promise.reject(new TypeError("endApproval needs the tool's name, e.g. \"create_event\""));
    }
    return this.api.endApproval(tool);
  }

  /**
   * Stop the answer the assistant is writing the user in `channelUrl` (`POST
   * /api/v1/agent/turns/stop`), for a Stop button shown while a message's `data` is
   * `{"streaming":true}`. Resolves `{status: "stopped"}` when a turn of the user ran there: its message
   * keeps the text so far and its final update's `data` is `{"streaming":false,"stopped":true}`
   * (within a second); `{status: "idle"}` when none of theirs was running (another member's answer in a
   * group is never stopped, and a request waiting for the device is left as it is). Tools that
   * already ran stay done. Throws {@link AssistantApiError} (401, 422, 429, ...), and a `TypeError`
   * for an empty channel url.
   */
  stop(channelUrl: string): Promise<StopResult> {
    if (typeof channelUrl !== "string" || channelUrl === "") {
      return Promise.reject(new TypeError("stop needs the channel's url"));
    }
    return this.api.stop(channelUrl);
  }
}
