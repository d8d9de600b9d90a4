import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { BUILTIN_METHODS, ErrorCodes } from "@truloop/assistant-client";
import { dev } from "./support/context.js";
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
      methods: Record<string, unknown>;
      errors: Record<string, { message: string }>;
    };
    assert.deepEqual([...BUILTIN_METHODS], Object.keys(snapshot.methods));
    for (const [code, { message }] of Object.entries(snapshot.errors)) {
      assert.equal(ErrorCodes[message as keyof typeof ErrorCodes], Number(code), message);
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
