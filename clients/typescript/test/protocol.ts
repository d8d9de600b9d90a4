import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  AssistantApiError,
  BUILTIN_METHODS,
  ErrorCodes,
  type FetchLike,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  isErrorOf,
} from "@truloop/assistant-client";
import { clientFor, dev } from "./support/context.js";
import { PACKAGE_ROOT } from "./support/devserver.js";

const REFRESH = "npm run protocol:refresh (in clients/typescript), then commit protocol.json and src/generated/protocol.ts";

/** Where two JSON values differ, as `path: what` lines (at most `limit`). */
export function differences(snapshot: unknown, served: unknown, path = "$", limit = 20): string[] {
  const found: string[] = [];
  const walk = (a: unknown, b: unknown, at: string): void => {
    if (found.length >= limit) return;
    const objects = typeof a === "object" && a !== null && typeof b === "object" && b !== null;
    if (objects && Array.isArray(a) === Array.isArray(b)) {
      const left = a as Record<string, unknown>;
      const right = b as Record<string, unknown>;
      for (const key of new Set([...Object.keys(left), ...Object.keys(right)])) {
        const next = Array.isArray(a) ? `${at}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`;
        if (!(key in right)) found.push(`${next}: in the snapshot, no longer served`);
        else if (!(key in left)) found.push(`${next}: served, not in the snapshot: ${JSON.stringify(right[key])}`);
        else walk(left[key], right[key], next);
      }
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      found.push(`${at}: the snapshot has ${JSON.stringify(a)}, the server ${JSON.stringify(b)}`);
    }
  };
  walk(snapshot, served, path);
  return found;
}

describe("the protocol document", () => {
  test("the package's snapshot (protocol.json) is what the server serves at GET /api/v1/agent/protocol", async () => {
    const response = await fetch(`${dev().baseUrl}/api/v1/agent/protocol`);
    assert.equal(response.status, 200);
    const served: unknown = await response.json();
    const snapshot: unknown = JSON.parse(readFileSync(join(PACKAGE_ROOT, "protocol.json"), "utf8"));
    const drift = differences(snapshot, served);
    assert.deepEqual(
      drift,
      [],
      `the server's protocol document differs from protocol.json:\n  ${drift.join("\n  ")}\nrefresh it: ${REFRESH}`,
    );
  });

  test("the generated types' constants follow the snapshot", () => {
    const snapshot = JSON.parse(readFileSync(join(PACKAGE_ROOT, "protocol.json"), "utf8")) as {
      protocol_version: string;
      methods: Record<string, unknown>;
      errors: Record<string, { message: string }>;
    };
    assert.equal(PROTOCOL_VERSION, snapshot.protocol_version);
    assert.match(PROTOCOL_VERSION, /^\d{4}-\d{2}-\d{2}$/);
    assert.deepEqual([...BUILTIN_METHODS], Object.keys(snapshot.methods));
    for (const [code, { message }] of Object.entries(snapshot.errors)) {
      assert.equal(ErrorCodes[message as keyof typeof ErrorCodes], Number(code), message);
    }
  });

  test("the client names its protocol version: in a header on every request, and in its declaration", async () => {
    const sent: { method: string; version: string | undefined; body: string | undefined }[] = [];
    const recording: FetchLike = (url, init) => {
      const version = Object.entries(init.headers).find(([name]) => name.toLowerCase() === PROTOCOL_HEADER.toLowerCase());
      sent.push({ method: init.method, version: version?.[1], body: init.body });
      return fetch(url, init);
    };
    const client = clientFor("yuna", { fetch: recording, deviceId: "yuna-phone" });
    try {
      await client.declareTools({ tools: [] });
      assert.deepEqual(await client.getTools(), { tools: [], protocol: PROTOCOL_VERSION });
      await client.pending();
      assert.deepEqual(
        sent.map(({ method, version }) => `${method} ${version}`),
        ["PUT", "GET", "GET"].map((method) => `${method} ${PROTOCOL_VERSION}`),
      );
      assert.equal(JSON.parse(sent[0]?.body ?? "{}").protocol, PROTOCOL_VERSION);

      // An app that speaks an older version says so; a version that is no date is refused.
      await client.declareTools({ tools: [], protocol: "2026-12-01" });
      assert.equal((await client.getTools()).protocol, "2026-12-01");
      const refused = await client.declareTools({ tools: [], protocol: "december" }).then(
        () => assert.fail("a version that is no date was taken"),
        (e: unknown) => e,
      );
      assert.ok(isErrorOf(refused, AssistantApiError) && refused.status === 400, String(refused));
      assert.equal(refused.code, "invalid_protocol");
      assert.match(refused.message, /YYYY-MM-DD/);
    } finally {
      await client.clearTools();
    }
  });

  test("a difference is named by its path", () => {
    assert.deepEqual(differences({ a: { b: 1, c: [1], "x.y": 0 } }, { a: { b: 2, c: [1, 2], d: true } }), [
      "$.a.b: the snapshot has 1, the server 2",
      "$.a.c[1]: served, not in the snapshot: 2",
      '$.a["x.y"]: in the snapshot, no longer served',
      "$.a.d: served, not in the snapshot: true",
    ]);
  });
});
