/**
 * The server's device endpoints, one method each: the answer (`tool-message`), the open calls
 * (`calls`), the app's tool declaration (`client-tools`), the standing approvals (`approvals`) and
 * stopping an answer (`turns/stop`). Statuses become outcomes or typed
 * errors here; `AssistantClient` documents them.
 */
import { readApproval, type StandingApproval } from "./approvals.js";
import { type CallInfo, type PendingRequest, pendingRequest, readCall } from "./calls.js";
import { AssistantApiError } from "./errors.js";
import { type ApiResponse, type Transport, apiError, errorOf } from "./http.js";
import { type ClientToolsDeclaration, type JsonRpcId, type JsonRpcResponse, PROTOCOL_VERSION } from "./protocol.js";

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

/** `PUT /api/v1/agent/client-tools` answered 200. */
export interface DeclareToolsResult {
  status: "ok";
  /** How many tools are declared now. */
  tools: number;
}

const TOOL_MESSAGE_PATH = "/api/v1/agent/tool-message";
const CLIENT_TOOLS_PATH = "/api/v1/agent/client-tools";
const CALLS_PATH = "/api/v1/agent/calls";
const APPROVALS_PATH = "/api/v1/agent/approvals";
const STOP_PATH = "/api/v1/agent/turns/stop";

/**
 * `POST /api/v1/agent/turns/stop` answered 200: `stopped`, a turn of the user ran in the channel and
 * was told to stop (its streamed message ends within a second with `data`
 * `{"streaming":false,"stopped":true}`); `idle`, none of theirs was running there.
 */
export interface StopResult {
  status: "stopped" | "idle";
}

export class Endpoints {
  constructor(
    private readonly transport: Transport,
    private readonly deviceId: string | undefined,
  ) {}

  async answer(response: JsonRpcResponse): Promise<ToolMessageOutcome> {
    const answer = await this.transport.send("POST", TOOL_MESSAGE_PATH, response);
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
    throw unexpected(answer, `answering ${String(response.id)}`);
  }

  /** The pending calls, as requests for `recipient`. */
  async pending(recipient: string | undefined): Promise<PendingRequest[]> {
    const answer = await this.transport.send("GET", CALLS_PATH);
    const body = answer.body as { calls?: unknown } | undefined;
    if (answer.status !== 200 || body === undefined || !Array.isArray(body.calls)) {
      throw unexpected(answer, "reading the open requests");
    }
    const requests: PendingRequest[] = [];
    for (const raw of body.calls as unknown[]) {
      const call = readCall(raw);
      if (call === undefined) throw unexpected(answer, "reading the open requests");
      if (call.state === "pending") requests.push(pendingRequest(call, raw, recipient));
    }
    return requests;
  }

  async call(id: JsonRpcId): Promise<CallInfo | null> {
    const answer = await this.transport.send("GET", `${CALLS_PATH}/${encodeURIComponent(String(id))}`);
    if (answer.status === 404) return null;
    const call = answer.status === 200 ? readCall(answer.body) : undefined;
    if (call === undefined) throw unexpected(answer, `reading call ${String(id)}`);
    return call;
  }

  async declareTools(declaration: ClientToolsDeclaration): Promise<DeclareToolsResult> {
    const versioned = { ...declaration, protocol: declaration.protocol ?? PROTOCOL_VERSION };
    const sent = this.deviceId === undefined ? versioned : { ...versioned, device_id: this.deviceId };
    const answer = await this.transport.send("PUT", CLIENT_TOOLS_PATH, sent);
    const body = answer.body as { status?: unknown; tools?: unknown } | undefined;
    if (answer.status === 200 && body?.status === "ok" && typeof body.tools === "number") {
      return { status: "ok", tools: body.tools };
    }
    throw unexpected(answer, "declaring tools");
  }

  async getTools(): Promise<ClientToolsDeclaration> {
    const answer = await this.transport.send("GET", this.clientToolsPath());
    const body = answer.body as (ClientToolsDeclaration & { device_id?: unknown }) | undefined;
    if (answer.status === 200 && body !== undefined && Array.isArray(body.tools)) {
      const { device_id: _deviceId, ...declaration } = body; // as declareTools was given it
      return declaration;
    }
    throw unexpected(answer, "reading the declared tools");
  }

  async clearTools(): Promise<void> {
    const answer = await this.transport.send("DELETE", this.clientToolsPath());
    if (answer.status === 204 || answer.status === 200) return;
    throw unexpected(answer, "removing the declared tools");
  }

  async approvals(): Promise<StandingApproval[]> {
    const answer = await this.transport.send("GET", APPROVALS_PATH);
    const body = answer.body as { approvals?: unknown } | undefined;
    if (answer.status !== 200 || body === undefined || !Array.isArray(body.approvals)) {
      throw unexpected(answer, "reading the standing approvals");
    }
    const approvals: StandingApproval[] = [];
    for (const raw of body.approvals as unknown[]) {
      const approval = readApproval(raw);
      if (approval === undefined) throw unexpected(answer, "reading the standing approvals");
      approvals.push(approval);
    }
    return approvals;
  }

  async endApproval(tool: string): Promise<void> {
    const answer = await this.transport.send("DELETE", `${APPROVALS_PATH}/${encodeURIComponent(tool)}`);
    if (answer.status === 204 || answer.status === 200) return;
    throw unexpected(answer, `ending the standing approval of ${tool}`);
  }

  async stop(channelUrl: string): Promise<StopResult> {
    const answer = await this.transport.send("POST", STOP_PATH, { channel_url: channelUrl });
    const body = answer.body as { status?: unknown } | undefined;
    if (answer.status === 200 && (body?.status === "stopped" || body?.status === "idle")) {
      return { status: body.status };
    }
    throw unexpected(answer, `stopping the answer in ${channelUrl}`);
  }

  /** The client-tools path, for this device when it has an id. */
  private clientToolsPath(): string {
    return this.deviceId === undefined
      ? CLIENT_TOOLS_PATH
      : `${CLIENT_TOOLS_PATH}?device_id=${encodeURIComponent(this.deviceId)}`;
  }
}

function unexpected(answer: ApiResponse, what: string): AssistantApiError {
  if (answer.status >= 400) return apiError(answer, what);
  return new AssistantApiError(`${what}: unexpected answer ${answer.status} ${JSON.stringify(answer.body)}`, {
    status: answer.status,
    code: "unexpected_response",
    attempts: answer.attempts,
  });
}
