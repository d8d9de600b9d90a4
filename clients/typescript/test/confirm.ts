import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { BuiltinMethods, InteractionConfirmParams, InteractionConfirmResult } from "@truloop/assistant-client";
import { clientFor, dev } from "./support/context.js";
import { freshChannel } from "./support/devserver.js";

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
