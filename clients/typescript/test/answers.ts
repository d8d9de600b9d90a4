import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type AnswerEvent, type HandleResult, parseAnswer } from "@truloop/assistant-client";
import { clientFor, dev } from "./support/context.js";
import { freshChannel } from "./support/devserver.js";

const GROWING = '{"streaming":true}';
const DONE = '{"streaming":false}';

/** The assistant's message as Sendbird's Chat SDK hands it to onMessageReceived / onMessageUpdated. */
function sdkMessage(messageId: number, text: string, data: string, createdAt: number, updatedAt: number, channelUrl = "chat-1") {
  return {
    messageId,
    channelUrl,
    messageType: "user",
    customType: "",
    data,
    message: text,
    sender: { userId: "truloop-assistant", nickname: "Truloop" },
    createdAt,
    updatedAt,
  };
}

/** The answer `handleMessage` resolved with, if any. */
function answerOf(result: HandleResult): AnswerEvent | undefined {
  return result.status === "ignored" && result.reason === "not_a_request" ? result.answer : undefined;
}

/** Waits until `check` holds, failing with `what` after 5 s. */
async function until(check: () => boolean, what: () => string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`not within 5 s: ${what()}`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

describe("answers that stream", () => {
  test("a streamed answer is one bubble: its first send notifies, each update grows it in place, the last one ends it", async () => {
    const started = Date.now();
    const events: AnswerEvent[] = [];
    const app = clientFor("jeff", { onAnswer: (answer) => events.push(answer) });
    const texts = ["이번 주 일정이에요.", "이번 주 일정이에요.\n- 화 10:00 팀 미팅", "이번 주 일정이에요.\n- 화 10:00 팀 미팅\n끝!"];

    const first = await app.handleMessage(sdkMessage(7, texts[0]!, GROWING, started, 0));
    assert.equal(first.status, "ignored");
    assert.equal(answerOf(first)?.first, true);
    await app.handleMessage(sdkMessage(7, texts[1]!, GROWING, started, started + 1000));
    await app.handleMessage(sdkMessage(7, texts[2]!, DONE, started, started + 2000));

    assert.deepEqual(
      events.map((e) => [e.messageId, e.text, e.streaming, e.first]),
      [
        [7, texts[0], true, true], // notify the user here only
        [7, texts[1], true, false],
        [7, texts[2], false, false],
      ],
    );
    const [bubble, ...others] = app.answers("chat-1");
    assert.deepEqual(others, []);
    assert.deepEqual([bubble?.text, bubble?.streaming, bubble?.stalled], [texts[2], false, false]);
    assert.deepEqual(app.answers("another-chat"), []);
  });

  test("a version arriving after a newer one, or a streaming one after the end, changes nothing", async () => {
    const started = Date.now();
    const events: AnswerEvent[] = [];
    const app = clientFor("jeff", { onAnswer: (answer) => events.push(answer) });
    await app.handleMessage(sdkMessage(8, "Hello.", GROWING, started, 0));
    await app.handleMessage(sdkMessage(8, "Hello. All done.", DONE, started, started + 2000));
    const late = await app.handleMessage(sdkMessage(8, "Hello. All", GROWING, started, started + 1000));
    assert.deepEqual(late, { status: "ignored", reason: "not_a_request" });
    assert.deepEqual(
      app.answers().map((a) => [a.text, a.streaming]),
      [["Hello. All done.", false]],
    );
    assert.equal(events.length, 2);
  });

  test("an answer that never gets its last update is shown as it is once it stalls", async () => {
    const started = Date.now();
    const events: AnswerEvent[] = [];
    const app = clientFor("jeff", { answerStallMs: 100, onAnswer: (answer) => events.push(answer) });
    let changes = 0;
    const stop = app.subscribeAnswers(() => (changes += 1));
    await app.handleMessage(sdkMessage(9, "The server stopped after this", GROWING, started, Date.now()));
    assert.equal(app.answers()[0]?.streaming, true);
    await until(() => app.answers()[0]?.stalled === true, () => JSON.stringify(app.answers()));
    assert.deepEqual(
      events.map((e) => [e.text, e.streaming, e.stalled, e.first]),
      [
        ["The server stopped after this", true, false, true],
        ["The server stopped after this", false, true, false],
      ],
    );
    assert.equal(changes, 2);
    stop();

    // one read from the channel's history long after its last change is shown as it is at once
    const history = await app.handleMessage(sdkMessage(10, "Old", GROWING, Date.now() - 70_000, Date.now() - 60_000));
    assert.deepEqual([answerOf(history)?.stalled, answerOf(history)?.streaming], [true, false]);
  });

  test("only the assistant's plain messages are answers: not a request, a user's message, a file", () => {
    const bot = { userId: "truloop-assistant" };
    assert.equal(parseAnswer({ messageId: 1, message: "hi", customType: "agent-rpc", data: "{}", sender: bot }), null);
    assert.equal(parseAnswer({ messageId: 2, message: "hi", customType: "", sender: { userId: "jeff" } }), null);
    assert.equal(parseAnswer({ messageId: 3, messageType: "file", url: "https://x", sender: bot }), null);
    assert.equal(parseAnswer("hi"), null);
    // the Platform API's and webhooks' shape reads too; a data that is not JSON is a whole answer
    const answer = parseAnswer({ message_id: 4, channel_url: "c", message: "hi", custom_type: "", data: "{", user: { user_id: "truloop-assistant" } });
    assert.deepEqual([answer?.messageId, answer?.channelUrl, answer?.text, answer?.streaming], [4, "c", "hi", false]);
  });

  test("the assistant's whole answer from the server is a bubble that does not stream", async () => {
    const channel = freshChannel("answer");
    const asked = await dev().post(channel, "jeff", "오늘 무슨 요일이야?");
    const said = await dev().nextAnswer(channel, asked);
    const app = clientFor("jeff");
    const handled = await app.handleMessage(said);
    assert.equal(handled.status, "ignored");
    const answer = answerOf(handled);
    assert.deepEqual(
      [answer?.messageId, answer?.channelUrl, answer?.text, answer?.first],
      [said.message_id, channel, said.message, true],
    );
    assert.deepEqual(
      app.answers(channel).map((a) => a.text),
      [said.message],
    );
  });
});
