// The acp family on codex-acp (@zed-industries/codex-acp), run in a loopback-only network namespace against the
// fake provider (OpenAI Responses). The checks every CLI family passes are in src/testing/cli-family.ts.
import { expect, vi } from "vitest";
import { FAKE_KEY } from "../../testing/cli.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { AcpFactory, presetDescriptor } from "./factory.js";
import { PRESETS } from "./presets.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const codex = PRESETS.find((p) => p.name === "codex")!;

describeCliFamily({
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
  refusals: [
    {
      name: "a provider api codex-acp cannot speak",
      provider: { api: "anthropic" },
      message: /speaks only the OpenAI Responses API, but the provider's api is "anthropic"/,
    },
  ],
});
