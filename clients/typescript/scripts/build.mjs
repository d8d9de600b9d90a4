/**
 * `npm run build`: the wire types from protocol.json, then the ES module build (dist/esm) and the
 * CommonJS build (dist/cjs, marked as such by a package.json of its own), each with its .d.ts files.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function run(...args) {
  const done = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (done.status !== 0) process.exit(done.status ?? 1);
}

const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
run(join(root, "scripts", "protocol.mjs"), "generate");
// No files of an older layout linger: the old dist moves aside in one rename, then goes. Removing it
// in place can fail with ENOTEMPTY on a busy overlay filesystem; whatever is left aside is ignored
// (node_modules is neither packed nor committed) and removed by the next build.
const cache = join(root, "node_modules", ".cache");
function removeAside() {
  if (!existsSync(cache)) return;
  for (const name of readdirSync(cache).filter((n) => n.startsWith("truloop-old-dist-"))) {
    try {
      rmSync(join(cache, name), { recursive: true, force: true, maxRetries: 5 });
    } catch {
      // left for the next build
    }
  }
}
removeAside();
if (existsSync(join(root, "dist"))) {
  mkdirSync(cache, { recursive: true });
  renameSync(join(root, "dist"), join(cache, `truloop-old-dist-${process.pid}-${Date.now()}`));
}
removeAside();
run(tsc, "-p", "tsconfig.json");
run(tsc, "-p", "tsconfig.cjs.json");
mkdirSync(join(root, "dist", "cjs"), { recursive: true });
writeFileSync(join(root, "dist", "cjs", "package.json"), '{\n  "type": "commonjs"\n}\n');
