/**
 * `npm run build`: the wire types from protocol.json, then the ES module build (dist/esm) and the
 * CommonJS build (dist/cjs, marked as such by a package.json of its own), each with its .d.ts files.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function run(...args) {
  const done = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (done.status !== 0) process.exit(done.status ?? 1);
}

const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
run(join(root, "scripts", "protocol.mjs"), "generate");
rmSync(join(root, "dist"), { recursive: true, force: true, maxRetries: 5 }); // no files of an older layout linger (retried: a busy filesystem may say ENOTEMPTY)
run(tsc, "-p", "tsconfig.json");
run(tsc, "-p", "tsconfig.cjs.json");
mkdirSync(join(root, "dist", "cjs"), { recursive: true });
writeFileSync(join(root, "dist", "cjs", "package.json"), '{\n  "type": "commonjs"\n}\n');
