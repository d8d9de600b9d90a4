import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createElement } from "react";
import { create } from "react-test-renderer";
import type { CalendarGetEventsResult } from "@truloop/assistant-client";
import { type Answer } from "@truloop/assistant-client";
import { useAgentRequests, useAnswers } from "@truloop/assistant-client/react";
import { askForSchedule, clientFor, dev } from "./support/context.js";

const EVENTS: CalendarGetEventsResult = { events: [] };

// Render as in React Native's own test setup (react-test-renderer is meant for it there; elsewhere it
// prints a deprecation notice).
(globalThis as { IS_REACT_NATIVE_TEST_ENVIRONMENT?: boolean }).IS_REACT_NATIVE_TEST_ENVIRONMENT = true;

/** Waits until `check` holds (React renders on its own schedule), failing with `what` after 10 s. */
async function until(check: () => boolean, what: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`not within 10 s: ${what()}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

describe("useAgentRequests (@truloop/assistant-client/react)", () => {
  test("lists the open requests from pending() and from messages, and drops each when answered or settled elsewhere", async () => {
    const early = await askForSchedule("react-early", "david"); // open before the screen mounts
    const answers = new Map<string, (result: CalendarGetEventsResult) => void>();
    const app = clientFor("david").register(
      "calendar.getEvents",
      (_params, request, { signal }) =>
        new Promise<CalendarGetEventsResult>((resolve, reject) => {
          answers.set(String(request.id), resolve); // the card's button answers
          signal.addEventListener("abort", () => reject(signal.reason as Error));
        }),
    );
    const ours = new Set([early.id]);
    let shown: string[] = [];
    function Screen(): null {
      const { requests } = useAgentRequests(app, { onError: (error) => assert.fail(String(error)) });
      shown = requests.map((r) => String(r.id)).filter((id) => ours.has(id));
      return null;
    }
    const renderer = create(createElement(Screen));
    try {
      await until(() => shown.includes(early.id), () => `shown: ${JSON.stringify(shown)}`);

      const later = await askForSchedule("react-later", "david"); // arrives while the screen is up
      ours.add(later.id);
      const fromMessage = app.handleMessage(later.rpc);
      await until(() => shown.length === 2, () => `shown: ${JSON.stringify(shown)}`);
      assert.deepEqual(shown, [early.id, later.id]);

      answers.get(early.id)?.(EVENTS); // the user answers the first card
      await until(() => shown.length === 1, () => `shown: ${JSON.stringify(shown)}`);
      assert.deepEqual(shown, [later.id]);

      // the second is answered on another device: the update closes its card
      const phone = clientFor("david").register("calendar.getEvents", () => EVENTS);
      assert.equal((await phone.handleMessage(later.rpc)).status, "resuming");
      const update = await dev().nextSettled(later.channel, later.rpc.message_id, later.rpc.message_id);
      assert.equal((await app.handleMessage(update)).status, "settled");
      await until(() => shown.length === 0, () => `shown: ${JSON.stringify(shown)}`);
      assert.equal((await fromMessage).status, "settled");
    } finally {
      renderer.unmount();
    }
  });

  test("useAnswers shows one bubble per message, its text growing in place until it no longer streams", async () => {
    const app = clientFor("jeff");
    const bubble = (text: string, data: string, updatedAt: number) => ({
      messageId: 42,
      channelUrl: "react-answers",
      customType: "",
      data,
      message: text,
      sender: { userId: "truloop-assistant" },
      createdAt: Date.now(),
      updatedAt,
    });
    let shown: readonly Answer[] = [];
    let renders = 0;
    function Chat(): null {
      shown = useAnswers(app, "react-answers");
      renders += 1;
      return null;
    }
    const renderer = create(createElement(Chat));
    const view = () => JSON.stringify(shown.map((a) => [a.text, a.streaming]));
    try {
      assert.deepEqual(shown, []);
      await app.handleMessage(bubble("Hello.", '{"streaming":true}', 0));
      await until(() => view() === JSON.stringify([["Hello.", true]]), view);
      await app.handleMessage(bubble("Hello. Your week", '{"streaming":true}', Date.now() + 1));
      await until(() => view() === JSON.stringify([["Hello. Your week", true]]), view);
      await app.handleMessage(bubble("Hello. Your week is free.", '{"streaming":false}', Date.now() + 2));
      await until(() => view() === JSON.stringify([["Hello. Your week is free.", false]]), view);
      const settledRenders = renders;
      await app.handleMessage({ messageId: 43, channelUrl: "elsewhere", customType: "", message: "hi", sender: { userId: "truloop-assistant" } });
      await new Promise((done) => setTimeout(done, 50));
      assert.equal(view(), JSON.stringify([["Hello. Your week is free.", false]])); // another chat's answer is not here
      assert.ok(renders <= settledRenders + 1, `rendered ${renders - settledRenders} more times`);
    } finally {
      renderer.unmount();
    }
  });
});
