/**
 * The whole run: one real `truloop-assistant dev` server (offline model, local channel, embedded
 * Redis) for every test, stopped at the end, on failure too. Run with `npm test`.
 * (test/types.ts holds compile-time checks: building the tests runs them.)
 */
import { after } from "node:test";
import { useServer } from "./support/context.js";
import { startDevServer } from "./support/devserver.js";

const server = await startDevServer();
after(() => server.stop());
useServer(server);

await import("./parse.js");
await import("./turns.js");
await import("./retry.js");
await import("./tools.js");
