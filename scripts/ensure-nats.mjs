#!/usr/bin/env node
// Makes `nats-server` available for the cluster tests and benchmarks: Debian's package (2.9.10 on bookworm)
// when it is missing. Prints the server's path. Called from .ci/run and from the NATS tests' setup, so a fresh
// machine needs no step by hand. $BRAIN_NATS_SERVER names another binary (a current upstream release).
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

export function findNatsServer(env = process.env) {
  if (env.BRAIN_NATS_SERVER) return env.BRAIN_NATS_SERVER;
  for (const dir of [...(env.PATH ?? "").split(delimiter), "/usr/sbin", "/usr/bin"]) {
    if (!dir) continue;
    const candidate = join(dir, "nats-server");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

export function ensureNatsServer(env = process.env) {
  const found = findNatsServer(env);
  if (found) return found;
  const apt = ["apt-get", "/usr/bin/apt-get"].find((cmd) => {
    try {
      execFileSync(cmd, ["--version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  });
  if (!apt) {
    throw new Error(
      "nats-server is not installed and there is no apt-get here: install NATS server (https://nats.io) " +
        "and put it on PATH, or set BRAIN_NATS_SERVER to its path",
    );
  }
  const quiet = {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...env, DEBIAN_FRONTEND: "noninteractive" },
  };
  console.error("[ensure-nats] installing Debian's nats-server");
  execFileSync(apt, ["update"], quiet);
  execFileSync(apt, ["install", "-y", "nats-server"], quiet);
  const installed = findNatsServer(env);
  if (!installed)
    throw new Error("apt-get installed nats-server but it is not on PATH, /usr/sbin or /usr/bin");
  return installed;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(ensureNatsServer());
}
