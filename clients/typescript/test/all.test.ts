/**
 * The whole run: one real `truloop-assistant dev` server (offline model, local channel, embedded
 * Redis) for every test, started before the first and stopped after the last, on failure too. Run
 * with `npm test`. (test/types.ts holds compile-time checks: building the tests runs them.)
 */
import { after, before } from "node:test";
import { useServer } from "./support/context.js";
import { type DevServer, startDevServer } from "./support/devserver.js";

import "./options.js";
import "./protocol.js";
import "./parse.js";
import "./turns.js";
import "./confirm.js";
import "./retry.js";
import "./tools.js";
import "./devices.js";
import "./answers.js";
import "./stop.js";
import "./react.js";

let server: DevServer | undefined;

before(async () => {
  server = await startDevServer();
  useServer(server);
});

after(() => server?.stop());
