/**
 * A small HTTP server on 127.0.0.1 that answers from a script: for the faults the real server
 * cannot be made to produce on demand (503, 429 with a chosen Retry-After, dropped connections,
 * no answer at all).
 */
import { once } from "node:events";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { Clock } from "@truloop/assistant-client";

export interface Recorded {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** One scripted answer: a status with headers and a JSON body, or a dropped connection, or silence. */
export type Step =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  | { drop: true }
  | { hang: true };

export interface FakeServer {
  baseUrl: string;
  requests: Recorded[];
  close(): Promise<void>;
}

export async function fakeServer(steps: Step[]): Promise<FakeServer> {
  const requests: Recorded[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({
        method: req.method ?? "",
        url: req.url ?? "",
        authorization: req.headers.authorization,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      const step = steps[Math.min(requests.length, steps.length) - 1];
      if (step === undefined) throw new Error("no steps");
      if ("drop" in step) {
        req.socket.destroy();
      } else if ("hang" in step) {
        hanging.push(res);
      } else {
        const body = step.body === undefined ? "" : JSON.stringify(step.body);
        res.writeHead(step.status, { "content-type": "application/json", ...step.headers });
        res.end(body);
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no address");
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    requests,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** A clock that starts at the real time, whose sleeps return at once and move its time on; it records them. */
export function recordingClock(random = 0.5): Clock & { slept: number[] } {
  let now = Date.now();
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    random: () => random,
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
  };
}
