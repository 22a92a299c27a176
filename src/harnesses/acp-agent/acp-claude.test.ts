// The acp family on claude-agent-acp (@zed-industries/claude-agent-acp, Claude Code through its agent SDK), run
// in a loopback-only network namespace against the fake provider (Anthropic Messages). The checks every CLI
// family passes are in src/testing/cli-family.ts.
import { expect, vi } from "vitest";
import { FAKE_KEY } from "../../testing/cli.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { AcpFactory, presetDescriptor } from "./factory.js";
import { PRESETS } from "./presets.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const claude = PRESETS.find((p) => p.name === "claude")!;

describeCliFamily({
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
