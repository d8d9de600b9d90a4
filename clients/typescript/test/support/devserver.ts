/**
 * One real `truloop-assistant dev` server for the whole test run (offline model, local channel,
 * embedded Redis), and the dev API that stands in for Sendbird.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** clients/typescript, from dist-test/test/support/. */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** The command: `TRULOOP_ASSISTANT_BIN` (the pytest wrapper sets it), else the repository's .venv. */
export function assistantBin(): string {
  return process.env["TRULOOP_ASSISTANT_BIN"] ?? resolve(PACKAGE_ROOT, "..", "..", ".venv", "bin", "truloop-assistant");
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  server.close();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

export interface DevServer {
  baseUrl: string;
  /** What the server printed (for a failure's message). */
  output(): string;
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 30_000;

/** The dev server's `TRULOOP_UNHANDLED_CALL_WAIT_S` in these tests. */
export const UNHANDLED_CALL_WAIT_S = 3;

/** The server stops the embedded Redis it started itself (which also dies with it). */
function kill(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
}

export async function startDevServer(): Promise<DevServer> {
  const port = await freePort();
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TRULOOP_"))),
    // A -32601 waits this long for another device (30 s by default): the test of it need not wait 30 s.
    TRULOOP_UNHANDLED_CALL_WAIT_S: String(UNHANDLED_CALL_WAIT_S),
  };
  const bin = assistantBin();
  const child = spawn(bin, ["dev", "--port", String(port)], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString("utf8").split("\n"));
    if (lines.length > 400) lines.splice(0, lines.length - 400);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let spawnError: Error | undefined;
  child.on("error", (error) => {
    spawnError = error;
  });
  // A crashed test run leaves no server behind; in the same process group as the run, the server
  // also goes with it when the whole group is stopped (as the pytest wrapper does on a timeout).
  const onExit = () => kill(child, "SIGKILL");
  process.on("exit", onExit);
  const exited = new Promise<void>((done) => child.once("exit", () => done()));

  const baseUrl = `http://127.0.0.1:${port}`;
  const server: DevServer = {
    baseUrl,
    output: () => lines.join("\n"),
    async stop() {
      process.off("exit", onExit);
      if (child.exitCode !== null || child.signalCode !== null || spawnError !== undefined) return;
      kill(child, "SIGINT");
      const timer = setTimeout(() => kill(child, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };

  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (spawnError !== undefined) {
      throw new Error(`could not start ${bin} (set TRULOOP_ASSISTANT_BIN): ${spawnError.message}`);
    }
    if (child.exitCode !== null) {
      throw new Error(`${bin} dev exited with ${child.exitCode}:\n${server.output()}`);
    }
    try {
      const ready = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(1000) });
      if (ready.status === 200) return server;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  await server.stop();
  throw new Error(`${bin} dev was not ready within ${STARTUP_TIMEOUT_MS} ms:\n${server.output()}`);
}

/** A message of the dev channel, as the dev API lists it (a Platform-API-like shape). */
export interface DevMessage {
  message_id: number;
  channel_url: string;
  user_id: string;
  message: string;
  custom_type: string;
  data: string;
  /** Who it mentions: on an agent-rpc message, the user whose phone is to answer it. */
  mentioned_users: { user_id: string }[];
  created_at: number;
  /**
   * Set once the message was updated in place (a request's message when its call settled): the
   * update's place in the channel's sequence (the one message ids come from), and when.
   */
  updated_seq?: number;
  updated_at?: number;
}

/** How far into the channel a message takes a reader: its id, or its update when later. */
export function seqOf(message: DevMessage): number {
  return Math.max(message.message_id, message.updated_seq ?? 0);
}

let channels = 0;

/** A channel name no other test (nor an earlier run against the same server) has used. */
export function freshChannel(label: string): string {
  channels += 1;
  return `ts-${label}-${process.pid}-${Date.now().toString(36)}-${channels}`;
}

async function json<T>(response: Response): Promise<T> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.url}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** The dev server's API: write as a user, read the channel, get a device token. */
export class DevApi {
  constructor(readonly baseUrl: string) {}

  async token(userId: string): Promise<string> {
    const response = await fetch(`${this.baseUrl}/dev/api/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user_id: userId }),
    });
    return (await json<{ token: string }>(response)).token;
  }

  /**
   * Write in the channel as `userId` (which makes them a member of it); returns the message's id.
   * `expect` is the status the dev API is to answer: `queued` (a turn of the assistant) by
   * default, `not_addressed` for a group message that does not mention the assistant.
   */
  async post(channel: string, userId: string, message: string, expect = "queued"): Promise<number> {
    const response = await fetch(`${this.baseUrl}/dev/api/channels/${encodeURIComponent(channel)}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user_id: userId, message }),
    });
    const body = await json<{ status: string; message_id: string | null }>(response);
    if (body.status !== expect || body.message_id === null) throw new Error(`not ${expect}: ${JSON.stringify(body)}`);
    return Number(body.message_id);
  }

  /** What the server knows of a device request: `{state, user_id}`, or null. */
  async call(callId: string): Promise<{ state: string; user_id: string } | null> {
    const url = `${this.baseUrl}/dev/api/calls?id=${encodeURIComponent(callId)}`;
    const body = await json<{ calls: Record<string, { state: string; user_id: string } | null> }>(await fetch(url));
    return body.calls[callId] ?? null;
  }

  /**
   * The channel's messages after `after` (sent, or updated, after it), waiting up to `waitS`
   * seconds for one.
   */
  async messages(channel: string, after: number, waitS = 0): Promise<DevMessage[]> {
    const url = `${this.baseUrl}/dev/api/channels/${encodeURIComponent(channel)}/messages?after=${after}&wait=${waitS}`;
    return (await json<{ messages: DevMessage[] }>(await fetch(url))).messages;
  }

  /**
   * The first message after `after` that `match` accepts, waiting (with the dev API's `wait`) up to
   * `timeoutMs`; fails with what the channel holds when none comes.
   */
  async waitFor(
    channel: string,
    after: number,
    match: (message: DevMessage) => boolean,
    timeoutMs = 15_000,
  ): Promise<DevMessage> {
    const deadline = Date.now() + timeoutMs;
    let cursor = after;
    const seen: DevMessage[] = [];
    while (Date.now() < deadline) {
      const waitS = Math.max(0.1, Math.min(10, (deadline - Date.now()) / 1000));
      for (const message of await this.messages(channel, cursor, Number(waitS.toFixed(1)))) {
        seen.push(message);
        cursor = Math.max(cursor, seqOf(message));
        if (match(message)) return message;
      }
    }
    throw new Error(
      `no such message in ${channel} within ${timeoutMs} ms; it holds: ${JSON.stringify(
        seen.map((m) => [m.user_id, m.custom_type, m.message]),
      )}`,
    );
  }

  /** The next `agent-rpc` message after `after`. */
  nextRpc(channel: string, after: number): Promise<DevMessage> {
    return this.waitFor(channel, after, (m) => m.custom_type === "agent-rpc");
  }

  /** The settled update of the request in message `messageId`, after `after`. */
  nextSettled(channel: string, after: number, messageId: number, timeoutMs = 15_000): Promise<DevMessage> {
    return this.waitFor(
      channel,
      after,
      (m) => m.message_id === messageId && m.custom_type === "agent-rpc-settled",
      timeoutMs,
    );
  }

  /** The assistant's next plain answer after `after`. */
  nextAnswer(channel: string, after: number, timeoutMs = 15_000): Promise<DevMessage> {
    return this.waitFor(channel, after, (m) => m.user_id === "truloop-assistant" && m.custom_type === "", timeoutMs);
  }
}
