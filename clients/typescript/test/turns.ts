import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  AssistantApiError,
  type CalendarGetEventsResult,
  ConflictError,
  DeviceError,
  ErrorCodes,
  type FetchLike,
  type JsonRpcFailure,
  type JsonRpcSuccess,
  UnauthorizedError,
  UnprocessableError,
  isErrorOf,
} from "@truloop/assistant-client";
import { askForSchedule, clientFor, dev } from "./support/context.js";
import { freshChannel } from "./support/devserver.js";

const TEAM_MEETING: CalendarGetEventsResult = {
  events: [
    {
      id: "e1",
      title: "팀 미팅",
      start: { dateTime: "2026-11-24T10:00:00+09:00" },
      end: { dateTime: "2026-11-24T11:00:00+09:00" },
      location: "3층 회의실",
    },
  ],
};

describe("answering the assistant", () => {
  test("a registered handler's result reaches the assistant, whose answer names the event", async () => {
    const { channel, rpc } = await askForSchedule("turn", "jeff");
    const client = clientFor("jeff");
    const seen: unknown[] = [];
    client.register("calendar.getEvents", async (params, request) => {
      seen.push([params.startDate, params.endDate, request.id, request.notification]);
      return TEAM_MEETING;
    });

    const handled = await client.handleMessage(rpc);
    assert.equal(handled.status, "resuming");
    const request = JSON.parse(rpc.data) as { id: string; params: { startDate: string; endDate: string } };
    assert.deepEqual(seen, [[request.params.startDate, request.params.endDate, request.id, rpc.message]]);
    assert.deepEqual(handled.response, { jsonrpc: "2.0", id: request.id, result: TEAM_MEETING });

    const answer = await dev().nextAnswer(channel, rpc.message_id);
    assert.match(answer.message, /팀 미팅/);
    const told = await client.handleMessage(answer);
    assert.deepEqual([told.status, "reason" in told && told.reason], ["ignored", "not_a_request"]);
  });

  test("a DeviceError from the handler reaches the assistant as a JSON-RPC error it explains", async () => {
    const { channel, rpc } = await askForSchedule("permission", "mina");
    const client = clientFor("mina").register("calendar.getEvents", () => {
      throw DeviceError.permissionRequired("calendar.read", true);
    });

    const handled = await client.handleMessage(rpc);
    assert.equal(handled.status, "resuming");
    assert.deepEqual((handled.response as JsonRpcFailure).error, {
      code: -32010,
      message: "PermissionRequired",
      data: { requiredPermission: "calendar.read", canPromptAgain: true },
    });
    const answer = await dev().nextAnswer(channel, rpc.message_id);
    assert.match(answer.message, /캘린더 권한이 허용되지 않았어요/);
  });

  test("a method without a handler is answered -32601 (another device may still answer it), and one whose handler crashes -32603 without its text", async () => {
    const missing = await askForSchedule("nohandler", "seojun");
    const bare = clientFor("seojun");
    const unhandled = await bare.handleMessage(missing.rpc);
    // "this device cannot do that": the call stays open for another device of the user
    assert.equal(unhandled.status, "accepted");
    assert.ok(unhandled.status === "accepted");
    assert.equal(unhandled.remaining, 1);
    assert.deepEqual((unhandled.response as JsonRpcFailure).error, {
      code: ErrorCodes.MethodNotFound,
      message: "Method not found",
      data: { method: "calendar.getEvents" },
    });
    assert.deepEqual(await bare.respond(unhandled.response), { status: "duplicate" });
    assert.equal((await dev().call(String(unhandled.request.id)))?.state, "pending");

    const crashing = await askForSchedule("crash", "seojun");
    const reported: unknown[] = [];
    const client = clientFor("seojun", { onHandlerError: (error, request) => reported.push([error, request.id]) });
    const bug = new Error("SQLITE_BUSY at /data/user/0/app/calendar.db");
    client.register("calendar.getEvents", () => {
      throw bug;
    });
    const handled = await client.handleMessage(crashing.rpc);
    assert.equal(handled.status, "resuming");
    assert.deepEqual((handled.response as JsonRpcFailure).error, { code: -32603, message: "Internal error" });
    assert.deepEqual(reported, [[bug, handled.request.id]]);
    const answer = await dev().nextAnswer(crashing.channel, crashing.rpc.message_id);
    assert.match(answer.message, /캘린더를 확인하지 못했어요/);
    assert.doesNotMatch(answer.message, /SQLITE|calendar\.db/);
  });

  test("a request delivered twice runs its handler once, and the same answer sent again is a duplicate", async () => {
    const { channel, rpc } = await askForSchedule("duplicate", "jiwoo");
    let runs = 0;
    const client = clientFor("jiwoo").register("calendar.getEvents", async () => {
      runs += 1;
      return TEAM_MEETING;
    });
    const [first, second] = await Promise.all([client.handleMessage(rpc), client.handleMessage({ ...rpc })]);
    assert.equal(runs, 1);
    assert.equal(first.status, "resuming");
    assert.equal(second, first);

    assert.deepEqual(await client.respond(first.response), { status: "duplicate" });
    // another instance of the app (no memory of the first) sending it again: a duplicate, no error
    assert.deepEqual(await clientFor("jiwoo").respond(first.response), { status: "duplicate" });
    assert.match((await dev().nextAnswer(channel, rpc.message_id)).message, /팀 미팅/);
  });

  test("answering an unknown or superseded call resolves as gone, without throwing", async () => {
    const client = clientFor("sarah");
    const unknown = await client.respond({ jsonrpc: "2.0", id: `call_${"0".repeat(32)}`, result: TEAM_MEETING });
    assert.equal(unknown.status, "gone");
    assert.ok(unknown.status === "gone");
    assert.equal(unknown.reason, "unknown_call");
    assert.equal(unknown.httpStatus, 404);

    const { channel, rpc } = await askForSchedule("superseded", "sarah");
    const again = await dev().post(channel, "sarah", "지금 몇 시야?"); // the user writes again
    await dev().nextAnswer(channel, again);
    const late = await client.register("calendar.getEvents", () => TEAM_MEETING).handleMessage(rpc);
    assert.equal(late.status, "gone");
    assert.ok(late.status === "gone");
    assert.equal(late.reason, "call_superseded");
    assert.equal(late.httpStatus, 410);
  });

  test("a result that does not fit is a typed 422; the call stays pending and a fixed answer goes through", async () => {
    const { channel, rpc } = await askForSchedule("invalid", "hyunwoo");
    const client = clientFor("hyunwoo");
    let fixed = false;
    client.register("calendar.getEvents", () =>
      fixed ? TEAM_MEETING : ({ events: [{ title: "no id, no times" }] } as unknown as CalendarGetEventsResult),
    );

    const error = await client.handleMessage(rpc).then(
      () => assert.fail("a result without ids and times was accepted"),
      (e: unknown) => e,
    );
    assert.ok(isErrorOf(error, UnprocessableError), String(error));
    assert.equal(error.status, 422);
    assert.equal(error.code, "invalid_result");
    assert.equal(error.retryable, false);
    assert.match(error.message, /calendar\.getEvents/);

    fixed = true; // the app fixes it; the same delivery is handled again (a failed one is not remembered)
    const handled = await client.handleMessage(rpc);
    assert.equal(handled.status, "resuming");
    assert.match((await dev().nextAnswer(channel, rpc.message_id)).message, /팀 미팅/);

    // a different answer now: 409, a typed error as well
    const request = JSON.parse(rpc.data) as { id: string };
    await assert.rejects(
      client.respond({ jsonrpc: "2.0", id: request.id, result: { events: [] } }),
      (e: unknown) => isErrorOf(e, ConflictError) && e.status === 409 && e.code === "already_answered",
    );
  });

  test("another member's phone answering is told the request is not its own; the owner's answer still counts", async () => {
    const { channel, rpc } = await askForSchedule("notyours", "david");
    // a request that mentions nobody (from a server before mentions) reaches every member's handler
    const unmentioned = { ...rpc, mentioned_users: [] };
    const other = await clientFor("mina").register("calendar.getEvents", () => ({ events: [] })).handleMessage(unmentioned);
    assert.equal(other.status, "not_yours");
    const owner = await clientFor("david").register("calendar.getEvents", () => TEAM_MEETING).handleMessage(rpc);
    assert.equal(owner.status, "resuming");
    assert.match((await dev().nextAnswer(channel, rpc.message_id)).message, /팀 미팅/);
  });

  test("in a group channel a request goes to the person's 1:1 channel; another member's phone ignores it without running or posting anything", async () => {
    const channel = freshChannel("group");
    const hello = await dev().post(channel, "jeff", "지금 몇 시야?");
    await dev().nextAnswer(channel, hello); // jeff alone: every message is a turn
    await dev().post(channel, "mina", "안녕하세요", "not_addressed"); // two people now: only mentions are
    const asked = await dev().post(channel, "jeff", "@truloop-assistant 이번 주 일정 알려줘");
    // the request goes to jeff's own channel with the assistant; the group sees only a line saying so
    const rpc = await dev().nextRpc("relay-truloop-assistant-jeff", asked);
    const pointer = await dev().nextAnswer(channel, asked);
    assert.equal(pointer.data ?? "", "");
    assert.match(pointer.message, /1:1/);
    assert.deepEqual(rpc.mentioned_users, [{ user_id: "jeff" }]);
    const callId = (JSON.parse(rpc.data) as { id: string }).id;

    // should mina's app receive the request, it ignores it, asking for no token and posting nothing
    const sent: string[] = [];
    const recording: FetchLike = (url, init) => {
      sent.push(`${init.method} ${url}`);
      return fetch(url, init);
    };
    let minaRan = false;
    const mina = clientFor("mina", {
      userId: "mina",
      fetch: recording,
      getToken: () => {
        sent.push("token");
        return dev().token("mina");
      },
    }).register("calendar.getEvents", () => {
      minaRan = true;
      return { events: [] };
    });
    const ignored = await mina.handleMessage(rpc);
    assert.equal(ignored.status, "ignored");
    assert.ok(ignored.status === "ignored" && ignored.reason === "not_for_me");
    assert.equal(ignored.request.id, callId);
    assert.equal(ignored.request.recipient, "jeff");
    assert.equal(mina.isForMe(ignored.request), false);
    assert.equal(minaRan, false);
    assert.deepEqual(sent, []);
    assert.deepEqual(await dev().call(callId), { state: "pending", user_id: "jeff" });

    // a request that mentions nobody (from a server before mentions) is acted on as before:
    // here the server refuses mina's answer
    const unmentioned = { ...rpc, mentioned_users: [] };
    const legacy = clientFor("mina", { userId: () => "mina" }).register("calendar.getEvents", () => ({ events: [] }));
    assert.equal((await legacy.handleMessage(unmentioned)).status, "not_yours");

    // jeff's app (its user id from a function) answers it, and the assistant's answer appears
    let jeffRan = 0;
    const jeff = clientFor("jeff", { userId: () => "jeff" }).register("calendar.getEvents", () => {
      jeffRan += 1;
      return TEAM_MEETING;
    });
    const handled = await jeff.handleMessage(rpc);
    assert.equal(handled.status, "resuming");
    assert.equal(jeffRan, 1);
    assert.equal(handled.request.recipient, "jeff");
    const answer = await dev().nextAnswer(channel, pointer.message_id);
    assert.match(answer.message, /팀 미팅/);
    assert.deepEqual(await dev().call(callId), { state: "answered", user_id: "jeff" });
    assert.equal(minaRan, false);
    assert.deepEqual(sent, []);
  });

  test("a rejected token is fetched anew once; one that stays bad is an UnauthorizedError", async () => {
    const { rpc } = await askForSchedule("token", "jeff");
    const request = JSON.parse(rpc.data) as { id: string };
    const asks: boolean[] = [];
    const refreshed = clientFor("jeff", {
      getToken: async ({ refresh }) => {
        asks.push(refresh);
        return refresh ? dev().token("jeff") : "expired.token.value";
      },
    });
    const answer: JsonRpcSuccess = { jsonrpc: "2.0", id: request.id, result: { events: [] } };
    assert.deepEqual(await refreshed.respond(answer), { status: "resuming" });
    assert.deepEqual(asks, [false, true]);

    const hopeless = clientFor("jeff", { getToken: () => "not-a-jwt" });
    await assert.rejects(hopeless.respond(answer), (e: unknown) => isErrorOf(e, UnauthorizedError) && e.status === 401);

    // a body the server cannot take (here: no id) is an AssistantApiError with the server's code
    const bad = { jsonrpc: "2.0", id: null, result: {} } as unknown as JsonRpcSuccess;
    await assert.rejects(
      clientFor("jeff").respond(bad),
      (e: unknown) => isErrorOf(e, AssistantApiError) && e.status === 400 && e.code === "invalid_jsonrpc",
    );
  });
});
