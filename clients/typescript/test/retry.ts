import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  AssistantClient,
  type AssistantClientOptions,
  type JsonRpcSuccess,
  RateLimitedError,
  UnavailableError,
  isErrorOf,
} from "@truloop/assistant-client";
import { clientFor } from "./support/context.js";
import { type Step, fakeServer, recordingClock } from "./support/fake.js";

const ANSWER: JsonRpcSuccess = { jsonrpc: "2.0", id: "call_retry", result: { events: [] } };
const ACCEPTED: Step = { status: 202, body: { status: "accepted", remaining: 1 } };

/** A client of the fake server, sleeping on a recording clock. */
function clientOf(baseUrl: string, options: Partial<AssistantClientOptions> = {}, clock = recordingClock()) {
  const client = new AssistantClient({ baseUrl, getToken: () => "device-token", userId: "jeff", clock, ...options });
  return { client, clock };
}

describe("retrying the answer", () => {
  test("503s are retried with growing, jittered back-off, the same body and token each time", async () => {
    const server = await fakeServer([
      { status: 503, body: { error: { code: "unavailable", message: "busy" } } },
      { status: 503, body: { error: { code: "unavailable", message: "busy" } } },
      ACCEPTED,
    ]);
    try {
      const { client, clock } = clientOf(server.baseUrl, {}, recordingClock(0.5));
      assert.deepEqual(await client.respond(ANSWER), { status: "accepted", remaining: 1 });
      assert.equal(server.requests.length, 3);
      for (const request of server.requests) {
        assert.equal(request.method, "POST");
        assert.equal(request.url, "/api/v1/agent/tool-message");
        assert.equal(request.authorization, "Bearer device-token");
        assert.deepEqual(JSON.parse(request.body), ANSWER);
      }
      // 1 s then 2 s ceilings, each jittered within its upper half (random() = 0.5 here)
      assert.deepEqual(clock.slept, [750, 1500]);
    } finally {
      await server.close();
    }
  });

  test("429 waits Retry-After (seconds or an HTTP date) before sending again", async () => {
    const server = await fakeServer([
      { status: 503, headers: { "retry-after": new Date(Date.now() + 10_000).toUTCString() } },
      { status: 429, headers: { "retry-after": "3" }, body: { error: { code: "rate_limited", message: "slow down" } } },
      ACCEPTED,
    ]);
    try {
      const { client, clock } = clientOf(server.baseUrl);
      assert.equal((await client.respond(ANSWER)).status, "accepted");
      assert.equal(clock.slept.length, 2);
      assert.ok(clock.slept[0]! > 8500 && clock.slept[0]! <= 10_000, String(clock.slept[0]));
      assert.equal(clock.slept[1], 3000);
    } finally {
      await server.close();
    }
  });

  test("Retry-After is honoured in real time", async () => {
    const server = await fakeServer([{ status: 429, headers: { "retry-after": "1" } }, ACCEPTED]);
    try {
      const client = new AssistantClient({ baseUrl: server.baseUrl, getToken: () => "device-token", userId: "jeff" });
      const started = Date.now();
      assert.equal((await client.respond(ANSWER)).status, "accepted");
      assert.ok(Date.now() - started >= 1000, `sent again after ${Date.now() - started} ms`);
    } finally {
      await server.close();
    }
  });

  test("a dropped connection and an attempt with no answer are retried", async () => {
    const server = await fakeServer([{ drop: true }, { hang: true }, ACCEPTED]);
    try {
      const { client, clock } = clientOf(server.baseUrl, { retry: { attemptTimeoutMs: 300 } });
      assert.equal((await client.respond(ANSWER)).status, "accepted");
      assert.equal(server.requests.length, 3);
      assert.equal(clock.slept.length, 2);
    } finally {
      await server.close();
    }
  });

  test("when the attempts run out the error is typed and says it may be sent again later", async () => {
    const server = await fakeServer([{ status: 503, body: { error: { code: "unavailable", message: "Redis is slow" } } }]);
    try {
      const { client } = clientOf(server.baseUrl, { retry: { maxAttempts: 3 } });
      const error = await client.respond(ANSWER).then(
        () => assert.fail("resolved"),
        (e: unknown) => e,
      );
      assert.ok(isErrorOf(error, UnavailableError), String(error));
      assert.equal(error.status, 503);
      assert.equal(error.code, "unavailable");
      assert.equal(error.retryable, true);
      assert.equal(error.attempts, 3);
      assert.equal(server.requests.length, 3);
    } finally {
      await server.close();
    }

    const nobody = await fakeServer([ACCEPTED]);
    await nobody.close(); // nothing listens on its port any more
    const { client } = clientOf(nobody.baseUrl, { retry: { maxAttempts: 2 } });
    await assert.rejects(
      client.respond(ANSWER),
      (e: unknown) => isErrorOf(e, UnavailableError) && e.status === 0 && e.code === "network_error" && e.attempts === 2,
    );
  });

  test("an answer that could not be delivered is sent again as it was when the request comes again, without asking the user twice", async () => {
    const server = await fakeServer([{ status: 503 }, { status: 503 }, { status: 202, body: { status: "resuming" } }]);
    try {
      const { client } = clientOf(server.baseUrl, { retry: { maxAttempts: 2 } });
      let dialogs = 0;
      client.register("interaction.confirm", async () => {
        dialogs += 1;
        return { confirmed: true };
      });
      const message = {
        customType: "agent-rpc",
        sender: { userId: "truloop-assistant" },
        message: "Create 'Design review' tomorrow 10:30?",
        data: JSON.stringify({ jsonrpc: "2.0", id: "call_confirm", method: "interaction.confirm", params: { title: "Create 'Design review'?", message: "Tomorrow 10:30" } }),
      };
      const error = await client.handleMessage(message).then(
        () => assert.fail("resolved"),
        (e: unknown) => e,
      );
      assert.ok(isErrorOf(error, UnavailableError) && error.retryable, String(error));
      assert.deepEqual(error.rpcResponse, { jsonrpc: "2.0", id: "call_confirm", result: { confirmed: true } });

      const handled = await client.handleMessage(message); // e.g. the app re-reads the channel later
      assert.equal(handled.status, "resuming");
      assert.equal(dialogs, 1);
      assert.deepEqual(
        server.requests.map((r) => JSON.parse(r.body)),
        Array(3).fill({ jsonrpc: "2.0", id: "call_confirm", result: { confirmed: true } }),
      );
    } finally {
      await server.close();
    }
  });

  test("a Retry-After beyond the retry budget fails at once with the wait, rather than hold the app", async () => {
    const server = await fakeServer([{ status: 429, headers: { "retry-after": "120" }, body: { error: { code: "rate_limited", message: "x" } } }]);
    try {
      const { client, clock } = clientOf(server.baseUrl);
      await assert.rejects(
        client.respond(ANSWER),
        (e: unknown) => isErrorOf(e, RateLimitedError) && e.retryAfterMs === 120_000 && e.attempts === 1 && e.retryable,
      );
      assert.deepEqual(clock.slept, []);
    } finally {
      await server.close();
    }
  });

  test("the real server's 429 (over the per-user limit) surfaces as RateLimitedError with its Retry-After", async () => {
    const client = clientFor("yuna", { retry: { maxElapsedMs: 1000 } });
    let limited: unknown;
    for (let i = 0; i < 40 && limited === undefined; i++) {
      try {
        const outcome = await client.respond({ jsonrpc: "2.0", id: `call_${String(i).padStart(32, "0")}`, result: {} });
        assert.equal(outcome.status, "gone");
      } catch (error) {
        limited = error;
      }
    }
    assert.ok(isErrorOf(limited, RateLimitedError), String(limited));
    assert.equal(limited.status, 429);
    assert.equal(limited.code, "rate_limited");
    assert.ok(limited.retryAfterMs !== undefined && limited.retryAfterMs > 0 && limited.retryAfterMs <= 120_000);
  });
});
