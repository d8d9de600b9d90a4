import {
  AssistantApiError,
  ConflictError,
  isErrorOf,
  RateLimitedError,
  UnauthorizedError,
  UnavailableError,
  UnprocessableError,
} from "./errors.js";
import { PROTOCOL_HEADER, PROTOCOL_VERSION } from "./protocol.js";

/** The part of a `fetch` response this package reads. */
export interface FetchResponseLike {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** The part of `fetch` this package calls: the global `fetch` of React Native, browsers and Node 18+ fits. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<FetchResponseLike>;

/** How a request is retried on 429, 502, 503, 504, timeouts and network errors. */
export interface RetryPolicy {
  /** Sends at most this many times in all (default 6). */
  maxAttempts: number;
  /** The first back-off (default 1000 ms); it doubles each time, with jitter. */
  initialDelayMs: number;
  /** The longest back-off (default 8000 ms). A longer `Retry-After` is still honoured. */
  maxDelayMs: number;
  /** Gives up rather than wait past this long since the first send (default 60000 ms). */
  maxElapsedMs: number;
  /** Each attempt is abandoned (and retried) after this long (default 15000 ms). */
  attemptTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 6,
  initialDelayMs: 1000,
  maxDelayMs: 8000,
  maxElapsedMs: 60_000,
  attemptTimeoutMs: 15_000,
};

/** Where the time comes from: injectable so tests need not wait. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** A number in [0, 1), for the jitter. */
  random(): number;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: () => Math.random(),
};

/** Called with a fresh token when `refresh` is true (after a 401); may return a cached one otherwise. */
export type GetToken = (options: { refresh: boolean }) => string | Promise<string>;

export interface TransportOptions {
  baseUrl: string;
  getToken: GetToken;
  fetch: FetchLike;
  retry: RetryPolicy;
  clock: Clock;
}

/** A response the server gave, its body read as JSON when it is JSON. */
export interface ApiResponse {
  status: number;
  body: unknown;
  headers: FetchResponseLike["headers"];
  attempts: number;
}

const RETRIED_STATUSES = new Set([429, 502, 503, 504]);

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The back-off before attempt `attempt + 1`: exponential, the upper half jittered. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

function readBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The server's `{"error": {"code", "message"}}`, or something standing in for it. */
export function errorOf(response: ApiResponse): { code: string; message: string } {
  const body = response.body;
  if (typeof body === "object" && body !== null && "error" in body) {
    const error = (body as { error: unknown }).error;
    if (typeof error === "object" && error !== null) {
      const { code, message } = error as { code?: unknown; message?: unknown };
      return {
        code: typeof code === "string" ? code : `http_${response.status}`,
        message: typeof message === "string" ? message : `HTTP ${response.status}`,
      };
    }
  }
  return { code: `http_${response.status}`, message: `HTTP ${response.status}` };
}

/** The typed error for a response the caller does not take as an outcome. */
export function apiError(response: ApiResponse, what: string, now: number = Date.now()): AssistantApiError {
  const { code, message } = errorOf(response);
  const retryAfter = parseRetryAfter(response.headers.get("retry-after"), now);
  const init = {
    status: response.status,
    code,
    attempts: response.attempts,
    ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
  };
  const text = `${what}: ${response.status} ${code}: ${message}`;
  switch (response.status) {
    case 401:
      return new UnauthorizedError(text, init);
    case 409:
      return new ConflictError(text, init);
    case 422:
      return new UnprocessableError(text, init);
    case 429:
      return new RateLimitedError(text, { ...init, retryable: true });
    case 502:
    case 503:
    case 504:
      return new UnavailableError(text, { ...init, retryable: true });
    default:
      return new AssistantApiError(text, init);
  }
}

/** Sends requests to the assistant's API with the token, retrying what is safe to retry. */
export class Transport {
  constructor(private readonly options: TransportOptions) {}

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  /**
   * Send until the server gives an answer other than 429/502/503/504 (those, timeouts and network
   * errors are retried with back-off, honouring `Retry-After`), or the policy's budget runs out.
   * A 401 is retried once with a fresh token. Every request this package sends is idempotent, so
   * sending it again is always safe.
   *
   * Returns the response (whatever its status, except the retried ones); throws
   * {@link RateLimitedError} / {@link UnavailableError} when the retries ran out.
   */
  async send(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const { retry, clock } = this.options;
    const url = this.options.baseUrl.replace(/\/+$/, "") + path;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const started = clock.now();
    let refreshToken = false;
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      const token = await this.options.getToken({ refresh: refreshToken });
      refreshToken = false;
      let response: ApiResponse | undefined;
      let failure: unknown;
      try {
        response = await this.attempt(url, method, token, payload, attempt);
      } catch (error) {
        failure = error;
      }
      if (response !== undefined && response.status === 401 && !refreshed) {
        refreshed = refreshToken = true; // the token may have expired: once more with a new one
        continue;
      }
      if (response !== undefined && !RETRIED_STATUSES.has(response.status)) return response;

      const retryAfter =
        response === undefined ? undefined : parseRetryAfter(response.headers.get("retry-after"), clock.now());
      const wait = Math.max(retryAfter ?? 0, backoffMs(attempt, retry, clock.random));
      const outOfTime = clock.now() + wait - started > retry.maxElapsedMs;
      if (attempt >= retry.maxAttempts || outOfTime) {
        if (response !== undefined) throw apiError(response, `${method} ${path}`, clock.now());
        const timedOut = isErrorOf(failure, Error) && failure.name === "TimeoutError";
        throw new UnavailableError(
          `${method} ${path}: ${timedOut ? "no answer in time" : "could not reach the server"} (${describe(failure)})`,
          { status: 0, code: timedOut ? "timeout" : "network_error", retryable: true, attempts: attempt, cause: failure },
        );
      }
      await clock.sleep(wait);
    }
  }

  private async attempt(
    url: string,
    method: string,
    token: string,
    payload: string | undefined,
    attempts: number,
  ): Promise<ApiResponse> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.options.retry.attemptTimeoutMs);
    try {
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        accept: "application/json",
        [PROTOCOL_HEADER.toLowerCase()]: PROTOCOL_VERSION,
      };
      if (payload !== undefined) headers["content-type"] = "application/json";
      const init = { method, headers, signal: controller.signal, ...(payload === undefined ? {} : { body: payload }) };
      const response = await this.options.fetch(url, init);
      const text = await response.text();
      return { status: response.status, body: readBody(text), headers: response.headers, attempts };
    } catch (error) {
      if (timedOut) {
        const timeout = new Error(`no answer within ${this.options.retry.attemptTimeoutMs} ms`);
        timeout.name = "TimeoutError";
        throw timeout;
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

function describe(error: unknown): string {
  if (isErrorOf(error, Error)) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = isErrorOf(cause, Error) ? `: ${cause.message}` : "";
    return `${error.message}${detail}`;
  }
  return String(error);
}
