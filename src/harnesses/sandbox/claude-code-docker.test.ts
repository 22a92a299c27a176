// claude-code with `sandbox: docker` on a real Docker engine: the real Claude Code CLI runs inside a --network none
// container through `docker exec`, and reaches the fake provider on this host's loopback through the container's
// network namespace, and nothing else. Every check the CLI families share runs against it.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { FAKE_KEY } from "../../testing/cli.js";
import {
  checkKeyNotInAgent,
  checkProviderOnlyThroughProxy,
  checkTokensApart,
} from "../../testing/cli-credentials.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { docker, ensureDockerEngine, sessionContainers } from "../../testing/docker-engine.js";
import { dockerSandboxed } from "../../testing/docker-sandbox.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";
import { claudeCodeCase } from "../claude-code/testing/case.js";
import { BASE_IMAGE } from "./docker-sandbox.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
});

const { found, start } = describeCliFamily({
  ...claudeCodeCase,
  factory: dockerSandboxed((options) => new ClaudeCodeFactory(options)),
  // Its fake CLIs live in a temp dir the container does not mount: a program outside Brain's install cannot run
  // in the sandbox (and says so, as docker's exec error in the turn's error).
  skip: ["garbage"],
});

/** Whether a Claude Code transcript (a .jsonl file) under `dir` holds `text`. */
function transcriptHolds(dir: string, text: string): boolean {
  const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl"));
  return files.some((f) => readFileSync(join(dir, f), "utf8").includes(text));
}

describe.runIf(found)("claude-code in a docker sandbox", () => {
  it("runs its shell tool inside the container, which has no network, and removes the container on close", async () => {
    const b = await start();
    const session = await b.create();
    const turn = await session.prompt(
      "Look around CMD[hostname; cat /proc/1/cmdline | tr '\\0' ' '; ip -o link]",
    );
    expect((await turn.settled).status).toBe("completed");
    const [id] = sessionContainers(session.id);
    expect(docker("inspect", "-f", "{{.HostConfig.NetworkMode}}", id!)).toBe("none");
    const output = JSON.stringify((await events(session)).filter((e) => e.type === "tool.result"));
    expect(output).toContain(id!.slice(0, 12)); // the container's hostname
    expect(output).toContain("sleep 2147483647"); // its init
    expect(output).not.toMatch(/eth0/);
    expect(textOf(await events(session), turn.turn)).toContain("done");
    await b.t.brain.closeSession(session.id);
    expect(sessionContainers(session.id)).toEqual([]);
  });

  it("a turn whose container was killed says so, and the next turn runs in a new one", async () => {
    const b = await start();
    const session = await b.create();
    expect((await (await session.prompt("NOTOOL first")).settled).status).toBe("completed");
    // Claude Code writes its transcript after the turn's result: killed before that, its history is gone and Brain
    // rightly refuses the next turn (rebuild). What is tested here is a container killed between turns.
    const native = b.t.store.paths(session.id).native;
    await expect.poll(() => transcriptHolds(native, "NOTOOL first"), { timeout: 60_000 }).toBe(true);
    const [killed] = sessionContainers(session.id);
    docker("kill", killed!);
    const failed = await (await session.prompt("NOTOOL second")).settled;
    expect(failed.status).toBe("failed");
    // Docker's own words ("Container … is not running") said neither why nor what next.
    expect(failed.error?.message).toMatch(
      new RegExp(
        `container ${killed} exited with code 137; .*; the session's next turn starts a new container$`,
        "s",
      ),
    );
    const third = await (await session.prompt("NOTOOL third")).settled;
    expect(third.status, third.error?.message).toBe("completed");
    expect(sessionContainers(session.id)).not.toContain(killed);
  });

  it("never gives the agent in the container the provider's key: it reaches Brain's proxy bridged in", async () => {
    await checkKeyNotInAgent(await start(), ["x-api-key", FAKE_KEY], "/v1/messages");
  });

  it("gives each session's container its own proxy, which refuses another session's token", async () => {
    await checkTokensApart(await start(), "/v1/messages");
  });

  it("bridges only the proxy into the container, not the provider's own port", async () => {
    await checkProviderOnlyThroughProxy(await start(), "/v1/messages");
  });
});
