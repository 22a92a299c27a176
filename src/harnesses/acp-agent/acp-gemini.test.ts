// The acp family on the Gemini CLI's ACP mode (@google/gemini-cli, `gemini --acp`), run in a loopback-only
// network namespace against the fake provider (Gemini API). The checks every CLI family passes are in
// src/testing/cli-family.ts. Two of them are gemini's own here: gemini-cli 0.61 in ACP mode shows no shell
// output to its client (its shell's display is a list of terminal lines, which its ACP side drops), so the turn
// and restore checks look for the command's effect on the working directory instead of its output.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { Session } from "../../core/session.js";
import { events, textOf } from "../../testing/brain.js";
import { agentRequests, type CliBed, FAKE_KEY, historyOf } from "../../testing/cli.js";
import { checkKeyNotInAgent } from "../../testing/cli-credentials.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { AcpFactory, presetDescriptor } from "./factory.js";
import { PRESETS } from "./presets.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const gemini = PRESETS.find((p) => p.name === "gemini")!;

const { found, start } = describeCliFamily({
  harness: "acp:gemini",
  program: gemini.program,
  npmPackage: gemini.npmPackage,
  factory: (options) => new AcpFactory(presetDescriptor(gemini), options),
  shellCall: { name: "run_shell_command", arguments: { command: "ls -1" } },
  lastMessage: {},
  keyHeader: ["x-goog-api-key", FAKE_KEY],
  resumedToolResult: "functionResponse",
  appendOnly: true,
  checkpointFiles: (files) => {
    expect(files.map((f) => f.path)).toContain("acp.json");
    expect(files.some((f) => f.path.endsWith(".jsonl") && f.append_only)).toBe(true);
  },
  shellTool: "run_shell_command",
  bound: {
    echo: "mcp_brain_echo",
    shell: { name: "run_shell_command", arguments: { command: "touch shell.txt" } },
    agentChecksArguments: /params must have required property 'value'/,
  },
  refusals: [
    {
      name: "a provider api gemini cannot speak",
      provider: { api: "anthropic" },
      message: /speaks only the Gemini API, but the provider's api is "anthropic"/,
    },
  ],
  skip: ["turn", "fork"],
});

describe.runIf(found)("gemini's own", () => {
  it("runs a turn with a shell tool call (its result has no output), then text", async () => {
    const b = await start();
    const session = await b.create();
    const turn = await session.prompt("Make a file CMD[touch made.txt]");
    expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
    const all = await events(session);
    const call = all.find((e) => e.type === "tool.call");
    expect(call?.data).toMatchObject({ name: "run_shell_command", arguments: { command: "touch made.txt" } });
    const result = all.find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({
      id: (call?.data as { id: string } | undefined)?.id,
      is_error: false,
    });
    expect(existsSync(join(b.t.store.paths(session.id).native, "work", "made.txt"))).toBe(true);
    expect(textOf(all, turn.turn)).toBe("Let me look.done");
    expect(agentRequests(b.sandbox.provider.requests)[0]?.headers["x-goog-api-key"]).toBe(FAKE_KEY);
  });

  it("never gives the agent the provider's key: its shell cannot print it, the provider gets it from Brain's proxy", async () => {
    // Its ACP mode shows no shell output: the command writes the environment into the working directory.
    const printed = {
      command: "env > printed-env.txt",
      read: (b: CliBed, session: Session) =>
        readFileSync(join(b.t.store.paths(session.id).native, "work", "printed-env.txt"), "utf8"),
    };
    await checkKeyNotInAgent(await start(), ["x-goog-api-key", FAKE_KEY], "/v1beta/models", { printed });
  });

  it("restores a checkpoint into a fresh dir: full history, tools run in the new dir", async () => {
    const b = await start();
    const session = await b.create();
    await (await session.prompt("List the files here")).settled;
    await session.checkpoint();
    await (await session.prompt("NOTOOL second turn")).settled;
    const files = (await session.checkpoint()).files;
    expect(files.map((f) => f.path)).toContain("acp.json");
    expect(files.some((f) => f.path.includes("/chats/") && f.append_only)).toBe(true);
    const fork = await b.t.brain.fork(session.id);
    const work = join(b.t.store.paths(fork.id).native, "work");
    const before = b.sandbox.provider.requests.length;
    const turn = await fork.prompt("Mark the fork CMD[touch forked.txt]");
    expect((await turn.settled).status).toBe("completed");
    const history = historyOf(agentRequests(b.sandbox.provider.requests.slice(before))[0]!);
    expect(history).toContain("List the files here");
    expect(history).toContain("second turn");
    expect(existsSync(join(work, "forked.txt"))).toBe(true);
  });
});
