import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  AgentRpcParseError,
  ConflictError,
  ErrorCodes,
  isAgentRpcMessage,
  isErrorOf,
  isSettledMessage,
  parseAgentRpc,
  parseSettled,
  recipientOf,
} from "@truloop/assistant-client";
import { clientFor, dev } from "./support/context.js";
import { freshChannel } from "./support/devserver.js";

describe("reading requests out of chat messages", () => {
  test("the assistant's agent-rpc message reads as a typed calendar.getEvents request; other messages as null", async () => {
    const channel = freshChannel("parse");
    const asked = await dev().post(channel, "jeff", "이번 주 일정 알려줘");
    const rpc = await dev().nextRpc(channel, asked);

    const request = parseAgentRpc(rpc);
    assert.ok(request);
    assert.equal(request.jsonrpc, "2.0");
    assert.equal(request.method, "calendar.getEvents");
    assert.match(String(request.id), /^call_[0-9a-f]{32}$/);
    assert.match(String(request.params["startDate"]), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    assert.match(String(request.params["endDate"]), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    assert.equal(request.notification, rpc.message);
    assert.notEqual(request.notification, "");
    assert.equal(request.channelUrl, channel);
    assert.equal(request.messageId, rpc.message_id);
    assert.equal(request.message, rpc);
    // it mentions the user whose phone is to answer it
    assert.deepEqual(rpc.mentioned_users, [{ user_id: "jeff" }]);
    assert.equal(request.recipient, "jeff");

    // the same message as Sendbird's Chat SDK hands it over
    const sdkMessage = {
      messageId: rpc.message_id,
      channelUrl: rpc.channel_url,
      customType: rpc.custom_type,
      data: rpc.data,
      message: rpc.message,
      sender: { userId: rpc.user_id, nickname: "Truloop" },
      mentionType: "users",
      mentionedUsers: [{ userId: "jeff", nickname: "Jeff" }],
      mentionedUserIds: ["jeff"],
    };
    const fromSdk = parseAgentRpc(sdkMessage);
    assert.deepEqual(
      {
        id: fromSdk?.id,
        method: fromSdk?.method,
        params: fromSdk?.params,
        channelUrl: fromSdk?.channelUrl,
        recipient: fromSdk?.recipient,
      },
      { id: request.id, method: request.method, params: request.params, channelUrl: channel, recipient: "jeff" },
    );

    // the user's own message, and an agent-rpc message from someone other than the assistant
    const own = (await dev().messages(channel, asked - 1)).find((m) => m.message_id === asked);
    assert.equal(parseAgentRpc(own), null);
    assert.equal(parseAgentRpc({ ...rpc, user_id: "mallory" }), null);
    assert.equal(isAgentRpcMessage({ ...rpc, user_id: "mallory" }), false);
    assert.equal(parseAgentRpc({ ...rpc, user_id: "mallory" }, { botUserId: null })?.id, request.id);
    assert.equal(parseAgentRpc(null), null);
    assert.equal(parseAgentRpc("agent-rpc"), null);
  });

  test("the recipient is read from every shape a mention comes in; a message that mentions nobody has none", () => {
    const data = '{"jsonrpc":"2.0","id":"call_m","method":"calendar.getEvents","params":{}}';
    const webhook = { custom_type: "agent-rpc", sender: { user_id: "truloop-assistant" }, message: "…", data };
    const sdk = { customType: "agent-rpc", sender: { userId: "truloop-assistant" }, message: "…", data };
    const shapes: [string, unknown][] = [
      // the Platform API and webhooks, as the dev channel lists it too
      ["mentioned_users", { ...webhook, mention_type: "users", mentioned_users: [{ user_id: "mina", nickname: "Mina" }] }],
      // as the server sends it (the Platform API's request body)
      ["mentioned_user_ids", { ...webhook, mention_type: "users", mentioned_user_ids: ["mina"] }],
      // the Chat SDK
      ["mentionedUsers", { ...sdk, mentionType: "users", mentionedUsers: [{ userId: "mina", nickname: "Mina" }] }],
      ["mentionedUserIds", { ...sdk, mentionType: "users", mentionedUserIds: ["mina"] }],
    ];
    for (const [shape, message] of shapes) {
      assert.equal(parseAgentRpc(message)?.recipient, "mina", shape);
      assert.equal(recipientOf(message), "mina", shape);
    }
    // no mention (a server from before mentions), empty lists, or entries without an id
    for (const message of [
      webhook,
      sdk,
      { ...webhook, mentioned_users: [] },
      { ...sdk, mentionedUsers: [], mentionedUserIds: [] },
      { ...webhook, mentioned_users: [{ nickname: "nobody" }, null, 7] },
    ]) {
      const request = parseAgentRpc(message);
      assert.equal(request?.id, "call_m");
      assert.equal(request?.recipient, undefined, JSON.stringify(message));
    }
    assert.equal(recipientOf(null), undefined);
  });

  test("an agent-rpc message whose data is not a JSON-RPC request throws AgentRpcParseError, with the id when it can be read", () => {
    const message = (data: unknown) => ({ custom_type: "agent-rpc", user_id: "truloop-assistant", message: "…", data });
    const cases: [unknown, string | undefined, RegExp][] = [
      ["{not json", undefined, /not JSON/],
      ["[1,2]", undefined, /not a JSON-RPC request object/],
      ['{"jsonrpc":"2.0","method":"calendar.getEvents","params":{}}', undefined, /no id/],
      ['{"jsonrpc":"2.0","id":"call_1","params":{}}', "call_1", /no method/],
      ['{"jsonrpc":"1.0","id":"call_2","method":"m","params":{}}', "call_2", /"2\.0"/],
      ['{"jsonrpc":"2.0","id":"call_3","method":"m","params":[1]}', "call_3", /params of m are not an object/],
    ];
    for (const [data, id, text] of cases) {
      assert.throws(
        () => parseAgentRpc(message(data)),
        (error: unknown) => isErrorOf(error, AgentRpcParseError) && error.id === id && text.test(error.message),
        String(data),
      );
    }
    // params may be left out; data may come already parsed
    assert.deepEqual(parseAgentRpc(message('{"jsonrpc":"2.0","id":7,"method":"m"}'))?.params, {});
    assert.equal(parseAgentRpc(message({ jsonrpc: "2.0", id: "call_4", method: "m", params: {} }))?.id, "call_4");
  });

  test("a request's settled update reads as the call's id and state, in every shape, and never as a request", () => {
    const data = '{"id": "call_s", "state": "superseded", "method": "calendar.getEvents"}';
    const platform = { custom_type: "agent-rpc-settled", user: { user_id: "truloop-assistant" }, message: "…", data };
    const sdk = { customType: "agent-rpc-settled", sender: { userId: "truloop-assistant" }, message: "…", data };
    for (const message of [platform, sdk]) {
      assert.equal(isSettledMessage(message), true);
      assert.equal(isAgentRpcMessage(message), false);
      assert.equal(parseAgentRpc(message), null);
      assert.deepEqual(parseSettled(message), { id: "call_s", state: "superseded", method: "calendar.getEvents" });
    }
    // data already parsed; no method; from someone else; another kind of message
    assert.deepEqual(parseSettled({ ...sdk, data: { id: 7, state: "expired" } }), { id: 7, state: "expired", method: undefined });
    assert.equal(parseSettled({ ...sdk, sender: { userId: "mallory" } }), null);
    assert.equal(parseSettled({ ...sdk, customType: "agent-rpc" }), null);
    for (const bad of ["{not json", '{"state": "answered"}', '{"id": "call_s"}']) {
      assert.throws(() => parseSettled({ ...platform, data: bad }), (e: unknown) => isErrorOf(e, AgentRpcParseError) && e.id === undefined);
    }
  });

  test("an unreadable request that names its id is answered -32600, so the assistant goes on instead of waiting an hour", async () => {
    const channel = freshChannel("unreadable");
    const asked = await dev().post(channel, "mina", "이번 주 일정 알려줘");
    const rpc = await dev().nextRpc(channel, asked);
    const request = JSON.parse(rpc.data) as { id: string };
    const broken = { ...rpc, data: JSON.stringify({ ...request, params: ["not", "an", "object"] }) };
    const client = clientFor("mina");
    let ran = false;
    client.register("calendar.getEvents", () => {
      ran = true;
      return { events: [] };
    });

    await assert.rejects(client.handleMessage(broken), (error: unknown) => {
      return isErrorOf(error, AgentRpcParseError) && error.id === request.id;
    });
    assert.equal(ran, false);
    const answer = await dev().nextAnswer(channel, rpc.message_id);
    assert.match(answer.message, /캘린더를 확인하지 못했어요/);
    // the -32600 is the answer that counts
    await assert.rejects(
      client.respond({ jsonrpc: "2.0", id: request.id, result: { events: [] } }),
      (error: unknown) => isErrorOf(error, ConflictError) && error.code === "already_answered",
    );
    assert.equal(ErrorCodes.InvalidRequest, -32600);
  });
});
