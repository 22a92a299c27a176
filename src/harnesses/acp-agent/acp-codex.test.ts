// The acp family on codex-acp (@zed-industries/codex-acp), run in a loopback-only network namespace against the
// fake provider (OpenAI Responses). The checks every CLI family passes are in src/testing/cli-family.ts.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { events, textOf, waitForEvent } from "../../testing/brain.js";
import { checkQueuedSteer, FAKE_KEY } from "../../testing/cli.js";
import { checkKeyNotInAgent } from "../../testing/cli-credentials.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { AcpFactory, presetDescriptor } from "./factory.js";
import { PRESETS } from "./presets.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const codex = PRESETS.find((p) => p.name === "codex")!;

const { found, start } = describeCliFamily({
  harness: "acp:codex",
  program: codex.program,
  npmPackage: codex.npmPackage,
  factory: (options) => new AcpFactory(presetDescriptor(codex), options),
  // A model codex knows: for others it writes a "model metadata not found" notice into every answer.
  provider: { path: "/v1", model: "gpt-5.4" },
  shellCall: { name: "exec_command" },
  lastMessage: {},
  keyHeader: ["authorization", `Bearer ${FAKE_KEY}`],
  resumedToolResult: "function_call_output",
  appendOnly: true,
  checkpointFiles: (files) => {
    expect(files.map((f) => f.path)).toContain("acp.json");
    expect(files.some((f) => f.path.includes("/rollout-") && f.append_only)).toBe(true);
  },
  shellTool: "exec_command",
  bound: { echo: "mcp__brain.echo", shell: { name: "exec_command", arguments: { cmd: "touch shell.txt" } } },
  refusals: [
    {
      name: "a provider api codex-acp cannot speak",
      provider: { api: "anthropic" },
      message: /speaks only the OpenAI Responses API, but the provider's api is "anthropic"/,
    },
  ],
});

describe.runIf(found)("the acp family's own, on codex-acp", () => {
  it("queues a steer as a follow-up inside the same turn (ACP cannot add to a running prompt)", async () => {
    const { all, turn } = await checkQueuedSteer(await start(), "exec_command");
    expect(textOf(all, turn)).toContain("hello from fake");
  });

  it("never gives the agent the provider's key: its shell cannot print it, the provider gets it from Brain's proxy", async () => {
    await checkKeyNotInAgent(await start(), ["authorization", `Bearer ${FAKE_KEY}`], "/responses");
  });

  it("an interrupt while a permission is pending cancels the request; the command does not run", async () => {
    const b = await start();
    const session = await b.create({ permissions: { tools: { exec_command: "ask" } } });
    const turn = await session.prompt("Create a file CMD[touch never.txt]");
    await waitForEvent(session, (e) => e.type === "permission.requested");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    expect(existsSync(join(b.t.store.paths(session.id).native, "work", "never.txt"))).toBe(false);
    const next = await session.prompt("NOTOOL again");
    expect((await next.settled).status).toBe("completed");
    expect(textOf(await events(session), next.turn)).toBe("hello from fake");
  });
});
