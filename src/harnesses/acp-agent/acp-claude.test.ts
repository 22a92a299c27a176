// The acp family on claude-agent-acp (@zed-industries/claude-agent-acp, Claude Code through its agent SDK), run
// in a loopback-only network namespace against the fake provider (Anthropic Messages). The checks every CLI
// family passes are in src/testing/cli-family.ts.
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConformanceTools } from "../../cli/commands/conformance/tools.js";
import { events, waitForEvent } from "../../testing/brain.js";
import { type CliBed, checkReadGated, cliBed, FAKE_KEY } from "../../testing/cli.js";
import { checkKeyNotInAgent } from "../../testing/cli-credentials.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { describeLostHistory } from "../../testing/cli-lost-history.js";
import { fixtureStdio } from "../../tools/mcp/testing/servers.js";
import { AcpFactory, presetDescriptor } from "./factory.js";
import { PRESETS } from "./presets.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const claude = PRESETS.find((p) => p.name === "claude")!;

const { found, start } = describeCliFamily({
  harness: "acp:claude",
  program: claude.program,
  npmPackage: claude.npmPackage,
  factory: (options) => new AcpFactory(presetDescriptor(claude), options),
  shellCall: { name: "Bash", arguments: { command: "ls -1" } },
  lastMessage: { usage: { input: expect.any(Number) } },
  keyHeader: ["x-api-key", FAKE_KEY],
  resumedToolResult: "tool_result",
  appendOnly: true,
  checkpointFiles: (files) => {
    expect(files.map((f) => f.path)).toContain("acp.json");
    expect(files.some((f) => f.path.endsWith(".jsonl") && f.append_only)).toBe(true);
  },
  shellTool: "Bash",
  bound: { echo: "mcp__brain__echo", shell: { name: "Bash", arguments: { command: "touch shell.txt" } } },
  refusals: [
    {
      name: "a provider api claude-agent-acp cannot speak",
      provider: { api: "openai-responses" },
      message: /speaks only the Anthropic Messages API, but the provider's api is "openai-responses"/,
    },
  ],
});

// The agent's home (and so its saved sessions) is in the native dir: lost, session/load would start it over.
describeLostHistory({
  found,
  start,
  harness: "acp:claude",
  transcript: ["claude/projects"],
  named: /^acp:claude: the agent's saved session is missing/,
});

describe.runIf(found)("the acp family's own, on claude-agent-acp", () => {
  let bed: CliBed | undefined;
  afterEach(async () => {
    await bed?.close();
    bed = undefined;
  });

  it("gates the read-only tools Claude Code runs unasked: a denied Read does not run, an asked one is asked", async () => {
    await checkReadGated(await start());
  });

  it("never gives the agent the provider's key: its shell cannot print it, the provider gets it from Brain's proxy", async () => {
    await checkKeyNotInAgent(await start(), ["x-api-key", FAKE_KEY], "/v1/messages");
  });

  it("checkpoints right after a bound tool call interrupted while it runs: the stopped process is done writing", async () => {
    // ConformanceTools' `wait` runs until its call is cancelled: the interrupt lands inside claude's tool call.
    bed = await cliBed(
      (launcher) => new AcpFactory(presetDescriptor(claude), { launcher }),
      {},
      { tools: [new ConformanceTools()] },
    );
    const session = await bed.create({ config: { tool_mode: "bound", tools: ["echo", "wait"] } });
    await (await session.prompt("NOTOOL first")).settled;
    const turn = await session.prompt("Wait CALL mcp__brain__wait {}");
    await waitForEvent(session, (e) => e.type === "tool.call" && e.turn === turn.turn);
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    // Refused when a file it lists is still growing (its size on disk then differs from the one declared).
    const files = (await session.checkpoint()).files;
    expect(files.some((f) => f.path.endsWith(".jsonl"))).toBe(true);
    const next = await session.prompt("NOTOOL again");
    expect((await next.settled).status).toBe("completed");
  });

  it("judges a call of a session MCP server's tool by Brain's name for it too, and offers only the server's listed tools", async () => {
    bed = await cliBed((launcher) => new AcpFactory(presetDescriptor(claude), { launcher }));
    const session = await bed.create({
      mcp_servers: { fx: fixtureStdio({ tools: ["echo", "pid"] }) },
      // Written as for every other family (README: `server__tool`); Claude calls the tool mcp__fx__echo.
      permissions: { tools: { fx__echo: "deny" } },
    });
    const resultOf = async (prompt: string) => {
      const turn = await session.prompt(prompt);
      expect((await turn.settled).status).toBe("completed");
      const all = await events(session);
      return {
        results: all.filter((e) => e.type === "tool.result" && e.turn === turn.turn).map((e) => e.data),
        warnings: all.filter((e) => e.type === "harness.warning" && e.turn === turn.turn).map((e) => e.data),
      };
    };
    // Allowed, and the server is there: its pid comes back.
    const allowed = await resultOf("CALL mcp__fx__pid {}");
    expect(allowed.results).toEqual([expect.objectContaining({ is_error: false })]);
    expect(JSON.stringify(allowed.results)).toMatch(/"text":"\d+"/);
    const denied = await resultOf('CALL mcp__fx__echo {"text":"echo-ran"}');
    expect(denied.results).toEqual([expect.objectContaining({ is_error: true })]);
    expect(JSON.stringify(denied.results)).not.toContain("echo-ran");
    const unlisted = await resultOf('CALL mcp__fx__env {"name":"PATH"}');
    expect(unlisted.results).toEqual([expect.objectContaining({ is_error: true })]);
    expect(unlisted.warnings).toEqual([
      { message: expect.stringContaining("mcp__fx__env is not among the tools mcp_servers.fx.tools offers") },
    ]);
  });
});
