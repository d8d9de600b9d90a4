import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { types } from "node:util";
import { AssistantClient, type AssistantClientOptions, parseAgentRpc } from "@truloop/assistant-client";

/** A TypeError itself, as the constructor throws it (not a subclass, nor an error from elsewhere). */
const isTypeError = (error: unknown): error is TypeError =>
  types.isNativeError(error) && Object.getPrototypeOf(error) === TypeError.prototype;

const BASE = { baseUrl: "https://assistant.example.com", getToken: () => "token" };
const REQUEST = {
  custom_type: "agent-rpc",
  user_id: "truloop-assistant",
  mentioned_users: [{ user_id: "jeff" }],
  message: "…",
  data: '{"jsonrpc":"2.0","id":"call_o","method":"calendar.getEvents","params":{}}',
};

describe("constructing a client", () => {
  test("without userId it throws a TypeError that says why", () => {
    for (const userId of [undefined, "", null, 7]) {
      assert.throws(
        () => new AssistantClient({ ...BASE, userId } as unknown as AssistantClientOptions),
        (error: unknown) =>
          isTypeError(error) && /userId is required/.test(error.message) && /another member/.test(error.message),
        String(userId),
      );
    }
  });

  test("userId as a function is asked each time; while it says nobody, only a request that mentions nobody is for this phone", () => {
    let signedIn: string | null = null;
    const client = new AssistantClient({ ...BASE, userId: () => signedIn });
    const mentioned = parseAgentRpc(REQUEST);
    const unmentioned = parseAgentRpc({ ...REQUEST, mentioned_users: [] });
    assert.ok(mentioned !== null && unmentioned !== null);
    assert.equal(client.isForMe(mentioned), false);
    assert.equal(client.isForMe(unmentioned), true);
    signedIn = "jeff";
    assert.equal(client.isForMe(mentioned), true);
    signedIn = "mina";
    assert.equal(client.isForMe(mentioned), false);
  });

  test("a baseUrl that is not an http(s) URL, or a deviceId that is empty or too long, is refused at once", () => {
    assert.throws(() => new AssistantClient({ ...BASE, baseUrl: "assistant.example.com", userId: "jeff" }), TypeError);
    for (const deviceId of ["", "x".repeat(129), 7]) {
      assert.throws(
        () => new AssistantClient({ ...BASE, userId: "jeff", deviceId } as unknown as AssistantClientOptions),
        (error: unknown) => isTypeError(error) && /deviceId/.test(error.message),
      );
    }
    assert.ok(new AssistantClient({ ...BASE, userId: "jeff", deviceId: "x".repeat(128) }));
  });
});
