/**
 * One user, several devices (a phone, a tablet, the app started again): every device sees each
 * request, the first real answer counts, and the others learn that the request settled.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { types } from "node:util";
import {
  type CalendarGetEventsResult,
  CallSettledError,
  ErrorCodes,
  type FetchLike,
  type JsonRpcFailure,
  PROTOCOL_VERSION,
  type SettledCall,
  isErrorOf,
} from "@truloop/assistant-client";
import { askForSchedule, clientFor, dev } from "./support/context.js";
import { freshChannel, seqOf } from "./support/devserver.js";
import { LOCATION_TOOL, STEPS_TOOL } from "./tools.js";

const DENTIST: CalendarGetEventsResult = {
  events: [
    {
      id: "phone-1",
      title: "치과 예약",
      start: { dateTime: "2026-11-25T15:00:00+09:00" },
      end: { dateTime: "2026-11-25T16:00:00+09:00" },
    },
  ],
};

/** A fetch that records what it sends (the requests a client posted). */
function recordingFetch(): { fetch: FetchLike; sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    fetch: (url, init) => {
      sent.push(`${init.method} ${url}`);
      return fetch(url, init);
    },
  };
}

/** A handler that waits (a dialog nobody answers) until its signal aborts, recording why. */
function waitingHandler(aborts: unknown[]) {
  return (_params: unknown, _request: unknown, { signal }: { signal: AbortSignal }) =>
    new Promise<never>((_resolve, reject) => {
      signal.addEventListener("abort", () => {
        aborts.push(signal.reason);
        reject(signal.reason as Error);
      });
    });
}

describe("several devices of one user", { concurrency: true }, () => {
  test("a tablet without the method answers first (-32601); the phone's real answer still resumes the turn", async () => {
    const { channel, rpc, id } = await askForSchedule("devices", "jiwoo");
    const tablet = clientFor("jiwoo", { deviceId: "jiwoo-tablet" }); // no calendar here
    const phone = clientFor("jiwoo", { deviceId: "jiwoo-phone" }).register("calendar.getEvents", () => DENTIST);

    const fromTablet = await tablet.handleMessage(rpc);
    assert.equal(fromTablet.status, "accepted");
    assert.ok(fromTablet.status === "accepted");
    assert.equal(fromTablet.remaining, 1); // still waiting, for another device
    assert.equal((fromTablet.response as JsonRpcFailure).error.code, ErrorCodes.MethodNotFound);
    assert.equal((await dev().call(id))?.state, "pending");

    const fromPhone = await phone.handleMessage(rpc);
    assert.equal(fromPhone.status, "resuming");
    const answer = await dev().nextAnswer(channel, rpc.message_id);
    assert.match(answer.message, /치과 예약/);
    assert.equal((await dev().call(id))?.state, "answered");
  });

  test("an app started again finds its open request with pending(), answers it once, and can look the call up", async () => {
    const { channel, rpc, id } = await askForSchedule("restart", "seojun");
    // the app was closed before it answered; a new instance asks what is still open
    let runs = 0;
    const restarted = clientFor("seojun").register("calendar.getEvents", () => {
      runs += 1;
      return DENTIST;
    });
    const open = await restarted.pending();
    const request = open.find((r) => r.id === id);
    assert.ok(request, `${id} is not among ${JSON.stringify(open.map((r) => r.id))}`);
    const sent = JSON.parse(rpc.data) as { method: string; params: unknown };
    assert.equal(request.method, sent.method);
    assert.deepEqual(request.params, sent.params);
    assert.equal(request.channelUrl, channel);
    assert.equal(request.recipient, "seojun");
    assert.ok(types.isDate(request.createdAt) && Math.abs(request.createdAt.getTime() - rpc.created_at) < 60_000);
    assert.ok(request.expiresAt.getTime() > request.createdAt.getTime());
    assert.equal(restarted.isForMe(request), true);
    const before = await restarted.call(id);
    assert.equal(before?.state, "pending");
    assert.equal(before?.settledAt, undefined);

    const handled = await restarted.handleRequest(request);
    assert.equal(handled.status, "resuming");
    // the same request as a chat message (the channel read again) runs nothing more
    assert.equal(await restarted.handleMessage(rpc), handled);
    assert.equal(runs, 1);
    assert.match((await dev().nextAnswer(channel, rpc.message_id)).message, /치과 예약/);

    assert.equal((await restarted.pending()).some((r) => r.id === id), false);
    const after = await restarted.call(id);
    assert.equal(after?.state, "answered");
    assert.ok(types.isDate(after?.settledAt));
    assert.equal(await restarted.call(`call_${"f".repeat(32)}`), null);
  });

  test("a request answered on one device aborts the other's handler once the updated message reaches it; nothing is posted", async () => {
    const { channel, rpc, id } = await askForSchedule("settled", "mina");
    const settledSeen: SettledCall[] = [];
    const aborts: unknown[] = [];
    const recorded = recordingFetch();
    const tablet = clientFor("mina", { fetch: recorded.fetch, onSettled: (s) => settledSeen.push(s) });
    tablet.register("calendar.getEvents", waitingHandler(aborts));
    const waiting = tablet.handleMessage(rpc); // its dialog is open
    assert.deepEqual(
      tablet.running().map((r) => r.id),
      [id],
    );

    const phone = clientFor("mina").register("calendar.getEvents", () => DENTIST);
    assert.equal((await phone.handleMessage(rpc)).status, "resuming");

    // the server updates the request's message in place (Sendbird's onMessageUpdated)
    const update = await dev().nextSettled(channel, rpc.message_id, rpc.message_id);
    assert.ok(seqOf(update) > rpc.message_id);
    assert.deepEqual(JSON.parse(update.data), { id, state: "answered", method: "calendar.getEvents" });
    assert.notEqual(update.message, "");
    assert.equal(tablet.parse(update), null); // not a request
    assert.equal(aborts.length, 0);

    const told = await tablet.handleMessage(update);
    assert.deepEqual(told, { status: "settled", id, state: "answered", method: "calendar.getEvents" });
    const ended = await waiting;
    assert.equal(ended.status, "settled");
    assert.ok(ended.status === "settled");
    assert.equal(ended.state, "answered");
    assert.equal(ended.request?.id, id);
    assert.equal(aborts.length, 1);
    assert.ok(isErrorOf(aborts[0], CallSettledError) && aborts[0].id === id && aborts[0].state === "answered");
    assert.deepEqual(tablet.running(), []);
    assert.deepEqual(settledSeen, [{ id, state: "answered", method: "calendar.getEvents" }]);
    assert.deepEqual(recorded.sent, []); // the tablet posted nothing

    // the update delivered again: told once; the request again: nothing runs
    assert.equal((await tablet.handleMessage({ ...update })).status, "settled");
    assert.equal((await tablet.handleMessage(rpc)).status, "settled");
    assert.equal(settledSeen.length, 1);
    assert.equal(aborts.length, 1);
    assert.match((await dev().nextAnswer(channel, rpc.message_id)).message, /치과 예약/);
  });

  test("a request the user moved past (410 on posting) aborts the handler still running for it", async () => {
    const { channel, rpc, id } = await askForSchedule("moved-on", "sarah");
    const aborts: unknown[] = [];
    const client = clientFor("sarah").register("calendar.getEvents", waitingHandler(aborts));
    const waiting = client.handleMessage(rpc);
    const again = await dev().post(channel, "sarah", "지금 몇 시야?"); // supersedes the request
    await dev().nextAnswer(channel, again);

    // an answer saved earlier is sent (say): the server says the call is gone
    const late = await client.respond({ jsonrpc: "2.0", id, result: { events: [] } });
    assert.equal(late.status, "gone");
    const ended = await waiting;
    assert.ok(ended.status === "settled", ended.status);
    assert.equal(ended.state, "superseded");
    assert.ok(isErrorOf(aborts[0], CallSettledError));
    assert.deepEqual(client.running(), []);
  });

  test("when no other device answers in time (TRULOOP_UNHANDLED_CALL_WAIT_S), the -32601 stands and the turn goes on", { timeout: 60_000 }, async () => {
    const { channel, rpc, id } = await askForSchedule("alone", "jeff");
    const tablet = clientFor("jeff", { deviceId: "jeff-tablet" });
    assert.equal((await tablet.handleMessage(rpc)).status, "accepted");
    const answer = await dev().nextAnswer(channel, rpc.message_id, 45_000);
    assert.match(answer.message, /캘린더를 확인하지 못했어요/);
    assert.equal((await dev().call(id))?.state, "cancelled");
    const update = await dev().nextSettled(channel, rpc.message_id, rpc.message_id);
    assert.deepEqual(await tablet.handleMessage(update), {
      status: "settled",
      id,
      state: "cancelled",
      method: "calendar.getEvents",
    });
  });

  test("each device's tool declaration is kept apart, and the assistant is offered what any of them declared", async () => {
    const phone = clientFor("david", { deviceId: "david-phone" });
    const tablet = clientFor("david", { deviceId: "david-tablet" });
    const anyDevice = clientFor("david"); // the declaration made without a device id
    try {
      await phone.declareTools({ tools: [LOCATION_TOOL] });
      await tablet.declareTools({ tools: [STEPS_TOOL], builtin: ["calendar.getEvents"] });
      assert.deepEqual(await phone.getTools(), { tools: [LOCATION_TOOL], protocol: PROTOCOL_VERSION });
      assert.deepEqual(await tablet.getTools(), {
        tools: [STEPS_TOOL],
        builtin: ["calendar.getEvents"],
        protocol: PROTOCOL_VERSION,
      });
      assert.deepEqual(await anyDevice.getTools(), { tools: [] });

      // the tablet's declaration does not hide the phone's tool from the assistant
      const channel = freshChannel("device-tools");
      const asked = await dev().post(channel, "david", "what is my current location?");
      const rpc = await dev().nextRpc(channel, asked);
      assert.equal(phone.parse(rpc)?.method, "location.getCurrent");
      phone.register("location.getCurrent", () => ({ latitude: 37.5665, longitude: 126.978 }));
      assert.equal((await phone.handleMessage(rpc)).status, "resuming");

      await tablet.clearTools(); // only the tablet's
      assert.deepEqual(await tablet.getTools(), { tools: [] });
      assert.deepEqual(await phone.getTools(), { tools: [LOCATION_TOOL], protocol: PROTOCOL_VERSION });
    } finally {
      await phone.clearTools();
      await tablet.clearTools();
    }
  });
});
