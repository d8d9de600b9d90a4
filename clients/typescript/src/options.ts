/** What the app configures, what its handlers get, and what handling a message comes to. */
import type { AnswerEvent } from "./answers.js";
import type { SettledCall } from "./calls.js";
import type { ToolMessageOutcome } from "./endpoints.js";
import type { Clock, FetchLike, GetToken, RetryPolicy } from "./http.js";
import type { AgentRpcRequest } from "./parse.js";
import type { JsonRpcResponse } from "./protocol.js";

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
  /**
   * Told of each answer of the assistant that reaches {@link AssistantClient.handleMessage}: a
   * plain message from it (`first` true: notify the user now) and every in-place update of one
   * that streams (`first` false: update its bubble, do not notify), and when one stalls.
   */
  onAnswer?: (answer: AnswerEvent) => void;
  /**
   * After how long without an update a streaming answer is shown as it is (`streaming` false,
   * `stalled` true): its last update may never come. Default 30 000 ms.
   */
  answerStallMs?: number;
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

/** The result of {@link AssistantClient.handleMessage} and {@link AssistantClient.handleRequest}. */
export type HandleResult =
  /**
   * Not a request for the phone (any other chat message). `answer` when it is an answer of the
   * assistant (see {@link AssistantClientOptions.onAnswer}).
   */
  | { status: "ignored"; reason: "not_a_request"; answer?: AnswerEvent }
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
