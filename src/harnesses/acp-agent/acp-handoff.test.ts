// Handoffs to the ACP presets, and their rebuilds, against the fake provider: claude-agent-acp gets a Claude Code
// transcript, codex-acp a Codex rollout, gemini-cli a chat recording, acp.json names it, and the
// harness's session/load makes the first model request carry the history as that agent builds it (not a summary).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { echoFactory } from "../../testing/brain.js";
import { historyOf } from "../../testing/cli.js";
import { type HandoffBed, useHandoffBed } from "../../testing/handoff-bed.js";
import { locateCli } from "../cli/locate.js";
import { AcpFactory, presetDescriptor } from "./factory.js";
import { PRESETS } from "./presets.js";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 60_000 });

const preset = (name: string) => PRESETS.find((p) => p.name === name)!;
const claude = preset("claude");
const codex = preset("codex");
const gemini = preset("gemini");
const found = locateCli(claude.program) && locateCli(codex.program) && locateCli(gemini.program);
const onV1 = useHandoffBed(
  (launcher) => [
    new AcpFactory(presetDescriptor(claude), { launcher }),
    new AcpFactory(presetDescriptor(codex), { launcher }),
    echoFactory(),
  ],
  "/v1",
);
// gemini-cli adds its own `/v1beta` to the base URL.
const onRoot = useHandoffBed((launcher) => [
  new AcpFactory(presetDescriptor(gemini), { launcher }),
  echoFactory(),
]);
const start = (harness: string) => (harness === "acp:gemini" ? onRoot() : onV1());

/** A model codex knows: for others it writes a "model metadata not found" notice into every answer. */
const MODELS: Record<string, string> = {
  "acp:claude": "fake-model",
  "acp:codex": "gpt-5.4",
  "acp:gemini": "gemini-2.5-flash",
};
const SUMMARY = "Conversation history, carried over";

/** The request since `before` that carried `prompt`. */
function sentWith(b: HandoffBed, before: number, prompt: string) {
  const request = b.since(before).find((r) => JSON.stringify(r.body).includes(prompt));
  expect(request, `no model request carried "${prompt}"`).toBeDefined();
  return request!;
}

describe.runIf(found)("handoff to and rebuild of the ACP presets, seeded natively", () => {
  it.each([{ to: "acp:claude" }, { to: "acp:codex" }, { to: "acp:gemini" }])(
    "echo → $to: the first request holds the runner's turns, its tool call as text",
    async ({ to }) => {
      const b = await start(to);
      const source = await b.t.brain.create({ harness: "echo", config: { tools: ["echo"] } });
      expect((await (await source.prompt("echo: KUMQUAT")).settled).status).toBe("completed");
      expect((await (await source.prompt("second PERSIMMON")).settled).status).toBe("completed");
      const moved = await b.t.brain.handoff(source.id, { to, model: MODELS[to]! });
      expect((await b.t.brain.record(moved.id)).seeded?.how).toBe("native");
      const before = b.sandbox.provider.requests.length;
      const outcome = await (await moved.prompt("NOTOOL and now?")).settled;
      expect(outcome.status, JSON.stringify(outcome.error)).toBe("completed");
      const request = sentWith(b, before, "NOTOOL and now?");
      const history = historyOf(request);
      for (const text of [
        "echo: KUMQUAT",
        "[Called tool echo with",
        "echo returned: KUMQUAT",
        "second PERSIMMON",
      ]) {
        expect(history).toContain(text);
      }
      expect(history).not.toContain(SUMMARY);
      // The earlier prompts are turns of their own, before the new one: not folded into it.
      const { messages, input, contents } = request.body;
      const items = (messages ?? input ?? contents) as {
        role?: string;
        content?: unknown;
        parts?: unknown;
      }[];
      const users = items.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content ?? m.parts));
      const at = (text: string) => users.findIndex((u) => u.includes(text));
      expect(at("KUMQUAT")).toBeGreaterThanOrEqual(0);
      expect(at("KUMQUAT")).toBeLessThan(at("PERSIMMON"));
      expect(at("PERSIMMON")).toBeLessThan(at("NOTOOL and now?"));
      expect(users[at("NOTOOL and now?")]).not.toContain("KUMQUAT");
    },
  );

  it.each([
    { harness: "acp:claude", dir: "claude/projects", result: '"tool_result"' },
    { harness: "acp:codex", dir: "codex/sessions", result: "function_call_output" },
    { harness: "acp:gemini", dir: "gemini/.gemini/tmp", result: "functionResponse" },
  ])(
    "$harness rebuild: lost session files are rewritten from the log; the next request carries the history",
    async ({ harness, dir, result }) => {
      const b = await start(harness);
      const source = await b.t.brain.create({ harness, config: { model: MODELS[harness]! } });
      expect((await (await source.prompt("List the files here")).settled).status).toBe("completed");
      expect((await (await source.prompt("NOTOOL say hi")).settled).status).toBe("completed");
      const t = await b.restart();
      rmSync(join(t.store.paths(source.id).native, dir), { recursive: true, force: true });
      const failed = await (await (await t.brain.session(source.id)).prompt("NOTOOL one")).settled;
      expect(failed.error?.message).toMatch(/the agent's saved session is missing/);
      expect((await t.brain.rebuild(source.id)).seeded.how).toBe("native");
      const before = b.sandbox.provider.requests.length;
      const again = await t.brain.session(source.id);
      const outcome = await (await again.prompt("NOTOOL two")).settled;
      expect(outcome.status, JSON.stringify(outcome.error)).toBe("completed");
      const history = historyOf(sentWith(b, before, "NOTOOL two"));
      for (const text of ["List the files here", "Let me look.", "NOTOOL say hi", "hello from fake"]) {
        expect(history).toContain(text);
      }
      // Its own shell call goes back as a call and its result.
      expect(history).toContain(result);
      expect(history).not.toContain(SUMMARY);
    },
  );
});
