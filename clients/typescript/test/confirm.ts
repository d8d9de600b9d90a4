import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  AssistantApiError,
  AssistantClient,
  type BuiltinMethods,
  type InteractionConfirmParams,
  type InteractionConfirmResult,
  UnauthorizedError,
  isErrorOf,
} from "@truloop/assistant-client";
import { clientFor, dev } from "./support/context.js";
import { type DevMessage, freshChannel, seqOf } from "./support/devserver.js";
import { fakeServer, recordingClock } from "./support/fake.js";

/** The assistant's first new message after the user's message `asked`: a request to the phone or a plain answer. */
function nextFromAssistant(channel: string, asked: number) {
  return dev().waitFor(
    channel,
    asked,
    (m) => m.message_id > asked && m.user_id === "truloop-assistant" && ["agent-rpc", ""].includes(m.custom_type),
  );
}

describe("the server's confirmation dialog", () => {
  test("the confirm handler moves the event before approving, or refuses with a reason the assistant repeats", async () => {
    const channel = freshChannel("confirm-decide");
    const client = clientFor<BuiltinMethods>("jeff");
    let answer: (params: InteractionConfirmParams) => InteractionConfirmResult;
    client.register("interaction.confirm", (params) => answer(params));

    answer = (params) => {
      const start = params.editable?.find((field) => field.name === "start_time")?.value;
      const end = params.editable?.find((field) => field.name === "end_time")?.value;
      assert.ok(typeof start === "string" && typeof end === "string", "the dialog offers the times");
      // an hour later, in the times the dialog gave (the person's zone)
      return { confirmed: true, edited: { start_time: start.replace("T15:", "T16:"), end_time: end.replace("T16:", "T17:") } };
    };
    const asked = await dev().post(channel, "jeff", "내일 오후 3시에 팀 회의 잡아줘");
    const rpc = await dev().nextRpc(channel, asked);
    assert.equal((await client.handleMessage(rpc)).status, "resuming");
    assert.match((await dev().nextAnswer(channel, rpc.message_id)).message, /바꾸신 대로.*16:00–17:00/);

    answer = () => ({ confirmed: false, reason: "Mina is away" });
    const again = await dev().post(channel, "jeff", "schedule a design review tomorrow at 10:30 am");
    const refused = await dev().nextRpc(channel, again);
    assert.equal((await client.handleMessage(refused)).status, "resuming");
    assert.match((await dev().nextAnswer(channel, refused.message_id)).message, /Mina is away/);
  });
});

describe("standing approvals", () => {
  test("always skips the dialog; approvals() lists it and endApproval() brings the dialog back", async () => {
    const channel = freshChannel("confirm-always");
    const client = clientFor<BuiltinMethods>("sarah");
    let dialogs = 0;
    let offered: InteractionConfirmParams["always"];
    client.register("interaction.confirm", (params) => {
      dialogs += 1;
      offered = params.always;
      return { confirmed: true, remember: "always" };
    });
    await client.endApproval("create_event"); // from an earlier run of this server
    assert.deepEqual(await client.approvals(), []);

    const beforeAsking = Date.now();
    const asked = await dev().post(channel, "sarah", "내일 오후 3시에 팀 회의 잡아줘");
    const rpc = await dev().nextRpc(channel, asked);
    assert.equal((await client.handleMessage(rpc)).status, "resuming");
    await dev().nextAnswer(channel, seqOf(rpc));
    assert.match(offered?.covers ?? "", /30일/, "the dialog says what always would cover");
    const [approval, ...others] = await client.approvals();
    assert.deepEqual(others, []);
    assert.equal(approval?.tool, "create_event");
    assert.deepEqual(approval.scope, { invitees: [], description: null }, "no one invited, no description");
    assert.equal(approval.until!.getTime() - approval.since.getTime(), 30 * 24 * 3600 * 1000);
    // The standing approval holds from the person's answer on, not from before it (a second for rounding).
    const since = approval.since;
    assert.ok(since instanceof Date && since.getTime() >= beforeAsking - 1000, `approved since ${since}`);

    const again = await dev().post(channel, "sarah", "schedule a design review tomorrow at 10:30 am");
    const unasked = await nextFromAssistant(channel, again);
    assert.equal(unasked.custom_type, "", "no dialog while the approval stands");
    const done = (m: DevMessage) => m.message_id === unasked.message_id && /10:30–11:30/.test(m.message);
    assert.match((await dev().waitFor(channel, again, done)).message, /Done: .Design review./); // created without asking
    assert.equal(dialogs, 1);

    await client.endApproval("create_event");
    assert.deepEqual(await client.approvals(), []);
    await client.endApproval("create_event"); // ending none is fine

    const third = await dev().post(channel, "sarah", "schedule a design review tomorrow at 10:30 am");
    const asking = await nextFromAssistant(channel, third);
    assert.equal(asking.custom_type, "agent-rpc", "asked again once the approval ended");
    assert.equal((JSON.parse(asking.data) as { method: string }).method, "interaction.confirm");
  });

  test("the tool's name goes in the path; the server's errors and odd answers are thrown as for other calls", async () => {
    const server = await fakeServer([
      { status: 204 },
      { status: 200, body: { approvals: [{ tool: "create_event" }] } },
      { status: 401, body: { error: { code: "invalid_token", message: "expired" } } },
    ]);
    try {
      const client = new AssistantClient({
        baseUrl: server.baseUrl,
        getToken: () => "device-token",
        userId: "jeff",
        clock: recordingClock(),
      });
      await client.endApproval("a/b tool");
      assert.equal(server.requests[0]?.method, "DELETE");
      assert.equal(server.requests[0]?.url, "/api/v1/agent/approvals/a%2Fb%20tool");
      assert.equal(server.requests[0]?.authorization, "Bearer device-token");

      const odd = await client.approvals().then(() => assert.fail("an approval without since was taken"), (e: unknown) => e);
      assert.ok(isErrorOf(odd, AssistantApiError), String(odd));
      assert.equal(odd.code, "unexpected_response");

      // a 401 is retried once with a fresh token, then thrown
      const denied = await client.approvals().then(() => assert.fail("a 401 was taken"), (e: unknown) => e);
      assert.ok(isErrorOf(denied, UnauthorizedError), String(denied));
      assert.equal(denied.code, "invalid_token");
      assert.equal(server.requests.length, 4);

      await assert.rejects(client.endApproval(""), TypeError);
      assert.equal(server.requests.length, 4, "nothing sent for an empty name");
    } finally {
      await server.close();
    }
  });
});
