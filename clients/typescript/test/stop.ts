import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AssistantClient, type StopResult, UnprocessableError, isErrorOf } from "@truloop/assistant-client";
import { clientFor } from "./support/context.js";
import { freshChannel } from "./support/devserver.js";
import { fakeServer, recordingClock } from "./support/fake.js";

describe("stopping an answer", () => {
  test("stop() in a channel where nothing of the user's runs is idle", async () => {
    const result: StopResult = await clientFor("jeff").stop(freshChannel("stop"));
    assert.deepEqual(result, { status: "idle" });
  });

  test("stop() posts the channel url, reads stopped, and throws the server's refusals", async () => {
    const server = await fakeServer([
      { status: 200, body: { status: "stopped" } },
      { status: 422, body: { error: { code: "invalid_body", message: "channel_url: too long" } } },
      { status: 200, body: { status: "paused" } },
    ]);
    try {
      const client = new AssistantClient({
        baseUrl: server.baseUrl,
        getToken: () => "device-token",
        userId: "jeff",
        clock: recordingClock(),
      });
      assert.deepEqual(await client.stop("ch-1"), { status: "stopped" });
      assert.equal(server.requests[0]?.method, "POST");
      assert.equal(server.requests[0]?.url, "/api/v1/agent/turns/stop");
      assert.equal(server.requests[0]?.authorization, "Bearer device-token");
      assert.deepEqual(JSON.parse(server.requests[0]?.body ?? ""), { channel_url: "ch-1" });

      const refused = await client.stop("ch-1").then(() => assert.fail("a 422 was taken"), (e: unknown) => e);
      assert.ok(isErrorOf(refused, UnprocessableError), String(refused));
      assert.equal(refused.code, "invalid_body");

      const odd = await client.stop("ch-1").then(() => assert.fail("an unknown status was taken"), (e: unknown) => e);
      assert.equal((odd as { code?: string }).code, "unexpected_response");

      await assert.rejects(client.stop(""), TypeError);
      assert.equal(server.requests.length, 3);
    } finally {
      await server.close();
    }
  });
});
