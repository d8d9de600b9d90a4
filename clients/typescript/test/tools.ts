import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  AssistantApiError,
  type BuiltinMethods,
  type ClientToolDeclaration,
  ConflictError,
  type MethodSpec,
  PROTOCOL_VERSION,
  UnprocessableError,
  isErrorOf,
} from "@truloop/assistant-client";
import { clientFor, dev } from "./support/context.js";
import { freshChannel } from "./support/devserver.js";

type AppMethods = BuiltinMethods & {
  "location.getCurrent": MethodSpec<Record<string, never>, { latitude: number; longitude: number; label?: string }>;
};

export const LOCATION_TOOL: ClientToolDeclaration = {
  name: "get_current_location",
  description: "The user's current location from the phone's GPS",
  method: "location.getCurrent",
  read_only: true,
  parameters: { type: "object", properties: {} },
  result: {
    type: "object",
    properties: { latitude: { type: "number" }, longitude: { type: "number" } },
    required: ["latitude", "longitude"],
  },
};

export const STEPS_TOOL: ClientToolDeclaration = {
  name: "get_step_count",
  description: "How many steps the user walked on a day",
  method: "health.getSteps",
  read_only: true,
  parameters: { type: "object", properties: { date: { type: "string" } }, required: ["date"] },
};

describe("declaring the app's own tools", () => {
  test("declare, read back, replace and clear", async () => {
    const client = clientFor("sarah");
    await client.clearTools();
    assert.deepEqual(await client.getTools(), { tools: [] });

    assert.deepEqual(
      await client.declareTools({ tools: [LOCATION_TOOL, STEPS_TOOL], builtin: ["calendar.getEvents", "interaction.confirm"] }),
      { status: "ok", tools: 2 },
    );
    assert.deepEqual(await client.getTools(), {
      tools: [LOCATION_TOOL, STEPS_TOOL],
      builtin: ["calendar.getEvents", "interaction.confirm"],
      protocol: PROTOCOL_VERSION, // the package's, sent with every declaration
    });

    assert.deepEqual(await client.declareTools({ tools: [STEPS_TOOL] }), { status: "ok", tools: 1 });
    assert.deepEqual(await client.getTools(), { tools: [STEPS_TOOL], protocol: PROTOCOL_VERSION });

    await client.clearTools();
    assert.deepEqual(await client.getTools(), { tools: [] });
    await client.clearTools(); // clearing nothing is fine
  });

  test("a name clash is a ConflictError and a bad schema an UnprocessableError; the previous declaration stays", async () => {
    const client = clientFor("hyunwoo");
    await client.declareTools({ tools: [STEPS_TOOL] });

    const clash = await client
      .declareTools({ tools: [{ ...STEPS_TOOL, name: "get_calendar_events" }] })
      .then(() => assert.fail("a server tool's name was taken"), (e: unknown) => e);
    assert.ok(isErrorOf(clash, ConflictError), String(clash));
    assert.equal(clash.status, 409);
    assert.match(clash.message, /get_calendar_events/);

    const badSchema = await client
      .declareTools({ tools: [{ ...STEPS_TOOL, parameters: { type: "object", properties: { date: { type: "day" } } } }] })
      .then(() => assert.fail("an invalid JSON Schema was taken"), (e: unknown) => e);
    assert.ok(isErrorOf(badSchema, UnprocessableError), String(badSchema));
    assert.equal(badSchema.status, 422);
    assert.equal(badSchema.code, "invalid_schema");
    assert.match(badSchema.message, /tools\[0\]\.parameters/);

    await assert.rejects(
      client.declareTools({ tools: [{ ...STEPS_TOOL, name: "Not A Name" }] }),
      (e: unknown) => isErrorOf(e, AssistantApiError) && e.status === 400,
    );

    assert.deepEqual(await client.getTools(), { tools: [STEPS_TOOL], protocol: PROTOCOL_VERSION });
    await client.clearTools();
  });

  test("a declared tool is called on the phone like a built-in one, and its answer reaches the user", async () => {
    const client = clientFor<AppMethods>("david");
    await client.declareTools({ tools: [LOCATION_TOOL] });
    try {
      const calls: unknown[] = [];
      let valid = false;
      client.register("location.getCurrent", async (params, request) => {
        calls.push([params, request.method]);
        // first a result without longitude (the declared result schema refuses it), then a good one
        return valid
          ? { latitude: 37.5665, longitude: 126.978, label: "Seoul City Hall" }
          : ({ latitude: 37.5665 } as { latitude: number; longitude: number });
      });

      const channel = freshChannel("declared");
      const asked = await dev().post(channel, "david", "what is my current location?");
      const rpc = await dev().nextRpc(channel, asked);
      const request = client.parse(rpc);
      assert.equal(request?.method, "location.getCurrent");
      assert.notEqual(request?.notification, "");

      await assert.rejects(
        client.handleMessage(rpc),
        (e: unknown) => isErrorOf(e, UnprocessableError) && e.code === "invalid_result" && /longitude/.test(e.message),
      );
      valid = true;
      const handled = await client.handleMessage(rpc);
      assert.equal(handled.status, "resuming");
      assert.deepEqual(calls, [
        [{}, "location.getCurrent"],
        [{}, "location.getCurrent"],
      ]);

      const answer = await dev().nextAnswer(channel, rpc.message_id);
      assert.match(answer.message, /37\.56|126\.97|Seoul City Hall/);
    } finally {
      await client.clearTools();
    }
  });
});
