// The claude-code harness on the real Claude Code CLI (node_modules/.bin/claude), run in a loopback-only network
// namespace against the fake provider. The checks every CLI family shares are in src/testing/cli-family.ts;
// here is what is Claude Code's own: a steer waits for the CLI's turn to end, and its read-only tools, which it
// runs unasked, are gated by the policy given up front.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import {
  agentRequests,
  checkQueuedSteer,
  checkReadGated,
  checkTornLineResume,
  FAKE_KEY,
  historyOf,
} from "../../testing/cli.js";
import { checkKeyNotInAgent } from "../../testing/cli-credentials.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { describeLostHistory } from "../../testing/cli-lost-history.js";
import { fixtureStdio } from "../../tools/mcp/testing/servers.js";
import { claudeCodeCase } from "./testing/case.js";

// Real CLIs start slowly on a loaded machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const { found, start } = describeCliFamily({
  ...claudeCodeCase,
  refusals: [
    {
      name: "a provider api Claude Code cannot speak",
      provider: { api: "openai-responses" },
      message: /speaks only the Anthropic Messages API, but the provider's api is "openai-responses"/,
    },
  ],
});
describeLostHistory({
  found,
  start,
  harness: "claude-code",
  transcript: ["claude/projects"],
  named: /the Claude Code transcript \(claude\/projects\/.*\.jsonl\) is missing/,
});

describe.runIf(found)("claude-code's own", () => {
  // A writer killed mid-line leaves the transcript torn: the next turn's entries must not join the torn line (pi's
  // did, before its harness ended the line), or they and the history chained through them are lost.
  it("resumes a transcript that ends in a torn line (killed mid-write, a full disk) without losing history", async () => {
    const transcript = (native: string) => {
      const projects = join(native, "claude/projects");
      const [folder] = readdirSync(projects);
      const [name] = readdirSync(join(projects, folder!)).filter((n) => n.endsWith(".jsonl"));
      return join(projects, folder!, name!);
    };
    await checkTornLineResume(await start(), transcript, '{"type":"user","uuid":"torn","parentUuid":"');
  });

  it("queues a steer as a follow-up inside the same turn, and says so", async () => {
    const { all, turn } = await checkQueuedSteer(await start(), "Bash");
    expect(textOf(all, turn)).toBe("Let me look.donehello from fake");
  });

  it("gates the read-only tools Claude Code runs unasked: a denied Read does not run, an asked one is asked", async () => {
    await checkReadGated(await start());
  });

  it("never gives the agent the provider's key: its shell cannot print it, the provider gets it from Brain's proxy", async () => {
    await checkKeyNotInAgent(await start(), ["x-api-key", FAKE_KEY], "/v1/messages");
  });

  it("sends a system prompt longer than one command-line argument may be (128 KiB)", async () => {
    const b = await start();
    const long = `Be brief. ${"Keep to the point. ".repeat(10_000)}END-OF-SYSTEM-PROMPT`;
    const session = await b.create({ config: { system_prompt: long } });
    const turn = await session.prompt("NOTOOL hi");
    expect((await turn.settled).status).toBe("completed");
    const sent = JSON.stringify(agentRequests(b.sandbox.provider.requests)[0]?.body.system);
    expect(sent).toContain("END-OF-SYSTEM-PROMPT");
  });

  it("in bound mode offers the session's MCP server's tools, each call logged and answered by Brain", async () => {
    const b = await start();
    const session = await b.create({
      config: { tool_mode: "bound", tools: ["echo"] },
      mcp_servers: { fx: fixtureStdio({ tools: ["echo"] }) },
    });
    const turn = await session.prompt('Use the server CALL mcp__brain__fx__echo {"text":"from mcp"}');
    expect((await turn.settled).status).toBe("completed");
    const offered = agentRequests(b.sandbox.provider.requests).map((r) => JSON.stringify(r.body.tools));
    expect(offered[0]).toContain('"mcp__brain__fx__echo"');
    expect(offered[0]).toContain('"mcp__brain__echo"');
    const all = await events(session);
    const call = all.find((e) => e.type === "tool.call");
    expect(call?.data).toMatchObject({ name: "fx__echo", arguments: { text: "from mcp" } });
    expect(all.find((e) => e.type === "tool.result")?.data).toEqual({
      id: (call!.data as { id: string }).id,
      content: [{ type: "text", text: "from mcp" }],
      is_error: false,
    });
    // The model got the server's answer through Brain.
    expect(historyOf(agentRequests(b.sandbox.provider.requests).at(-1)!)).toContain("from mcp");
  });
});
