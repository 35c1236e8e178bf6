// Runs before `npm start` and `npm test`: checks that npm installed a working Bun, not the
// placeholder the `bun` package leaves behind when its postinstall script did not run.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
// On Windows .bin/bun is a shell shim; the file the postinstall script replaces is the same.
const bun = process.platform === "win32" ? join(root, "node_modules/bun/bin/bun.exe") : join(root, "node_modules/.bin/bun");
// The real executable is about 100 MB; the placeholder is a few hundred bytes of shell script.
const MIN_BYTES = 1_000_000;

function fail(problem) {
  process.stderr.write(
    [
      `Hearth needs the Bun runtime from node_modules, but ${problem}.`,
      "",
      "Bun's npm package installs its binary in a postinstall script. Re-run the install with",
      "scripts allowed:",
      "",
      "    rm -rf node_modules && npm ci",
      "",
      "(not `npm ci --ignore-scripts`, and no `ignore-scripts=true` in an .npmrc). npm 11 runs a",
      'package\'s install script only when package.json allows it: the "allowScripts" entry',
      '"bun": true is there, keep it. To repair an existing install instead:',
      "",
      "    (cd node_modules/bun && node install.js)",
      "",
    ].join("\n"),
  );
  process.exit(1);
}

if (!existsSync(bun)) fail(`${bun} does not exist (was \`npm ci\` run?)`);

const size = statSync(bun).size;
if (size < MIN_BYTES) fail(`${bun} is a ${size}-byte placeholder, not the Bun executable`);

let version;
try {
  version = execFileSync(bun, ["--version"], { encoding: "utf8", timeout: 30_000, stdio: ["ignore", "pipe", "pipe"] }).trim();
} catch (e) {
  const detail = String(e.stderr || e.message || e).trim().split("\n")[0];
  fail(`\`${bun} --version\` failed: ${detail}`);
}
if (!/^\d+\.\d+\.\d+/.test(version)) fail(`\`${bun} --version\` printed "${version}" instead of a version`);

// A different version than package.json pins means node_modules is stale: worth a line, not a stop.
const pinned = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).dependencies?.bun;
if (pinned && /^\d+\.\d+\.\d+$/.test(pinned) && pinned !== version) {
  process.stderr.write(`warning: node_modules has Bun ${version} but package.json pins ${pinned}; run \`npm ci\` to match.\n`);
}
