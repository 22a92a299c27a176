#!/usr/bin/env node
// Makes a fresh clone runnable with Node built-ins only: install dependencies when node_modules is missing or
// older than the lockfile, then build. `npm start`, `npm test` and `npm run bench` run this first.
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const mtime = (path) => {
  try {
    return statSync(join(root, path)).mtimeMs;
  } catch {
    return -1;
  }
};
const run = (cmd, args) => {
  console.error(`[bootstrap] ${cmd} ${args.join(" ")}`);
  execFileSync(cmd, args, { cwd: root, stdio: "inherit" });
};
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

// An install rewrites node_modules/.package-lock.json, so its mtime says when the last one finished.
// `npm install`, not `npm ci`: the registry reachable here does not serve opencode-ai's binaries for other
// platforms, so they cannot be in the lockfile, and `npm ci` refuses a lockfile that lacks optional
// dependencies. `npm install` still installs exactly the locked versions.
const installed = mtime("node_modules/.package-lock.json");
if (installed < 0 || installed < mtime("package-lock.json")) {
  run(npm, ["install", "--no-audit", "--no-fund"]);
}
run(npm, ["run", "--silent", "build"]);
