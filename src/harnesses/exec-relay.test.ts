// The exec shims as the host runs them (built, from dist/): the docker CLI they start reads Brain's docker config,
// never one planted under the command's HOME, which lies in the native dir a session's container writes.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../testing/brain.js";
import { dockerExecShim } from "./nui/install-paths.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A HOME whose docker config sends every docker command to a Unix socket the agent serves; what it got. */
async function plantedContext(home: string): Promise<{ reached: () => boolean }> {
  const endpoint = join(home, "agent.sock");
  const name = "agent";
  const meta = join(home, ".docker/contexts/meta", createHash("sha256").update(name).digest("hex"));
  mkdirSync(meta, { recursive: true });
  const endpoints = { docker: { Host: `unix://${endpoint}`, SkipTLSVerify: false } };
  writeFileSync(join(meta, "meta.json"), JSON.stringify({ Name: name, Metadata: {}, Endpoints: endpoints }));
  writeFileSync(join(home, ".docker/config.json"), JSON.stringify({ currentContext: name }));
  let reached = false;
  const server = createServer((socket) => {
    reached = true;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(endpoint, resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { reached: () => reached };
}

describe("the docker sandbox's exec shim", () => {
  it.each([
    ["with Brain's docker config", true],
    ["with none given (an older launcher)", false],
  ])("runs docker exec %s, not the one the container wrote under the command's HOME", async (_, given) => {
    const home = tempDir("brain-shim-home-");
    const planted = await plantedContext(home);
    const config = tempDir("brain-docker-config-");
    const child = spawn(
      process.execPath,
      [
        dockerExecShim(),
        "--docker",
        "docker",
        ...(given ? ["--docker-config", config] : []),
        "--container",
        "c0ffee",
        "--",
        "true",
      ],
      // The CLI's environment as its harness builds it: HOME in the native dir, the provider key by name.
      { cwd: home, env: { PATH: process.env.PATH, HOME: home, PROVIDER_KEY: "sk-key" }, stdio: "ignore" },
    );
    await new Promise((resolve) => child.on("exit", resolve));
    expect(planted.reached()).toBe(false);
  });
});
