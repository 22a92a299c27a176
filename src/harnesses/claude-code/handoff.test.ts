// Handoffs between the real Claude Code and Codex CLIs, and a Claude Code rebuild, against the fake provider:
// the first model request of the new (or rebuilt) session carries every earlier prompt, assistant text and tool
// result. Each is seeded in its own native format.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { echoFactory, events } from "../../testing/brain.js";
import { historyOf } from "../../testing/cli.js";
import { type HandoffBed, useHandoffBed } from "../../testing/handoff-bed.js";
import { locateCli } from "../cli/locate.js";
import { CodexFactory } from "../codex/factory.js";
import { piRunnerPath } from "../process/descriptor.js";
import { ProcessFactory } from "../process/factory.js";
import { ClaudeCodeFactory } from "./factory.js";

vi.setConfig({ testTimeout: 240_000, hookTimeout: 60_000 });

const found = locateCli("claude") && locateCli("codex");
const start = useHandoffBed(
  (launcher) => [
    new ClaudeCodeFactory({ launcher }),
    new CodexFactory({ launcher }),
    echoFactory(),
    // runners/pi runs on the host: it reaches the fake provider on 127.0.0.1 like the api harness does.
    new ProcessFactory({ name: "pi", command: process.execPath, args: [piRunnerPath()] }),
  ],
  "/v1",
);

async function shellConversation(b: HandoffBed, harness: string) {
  const source = await b.t.brain.create({ harness, config: { model: "fake-model" } });
  await source.start();
  writeFileSync(join(b.t.store.paths(source.id).native, "work", "marker.txt"), "x");
  expect((await (await source.prompt("List the files here")).settled).status).toBe("completed");
  expect((await (await source.prompt("NOTOOL say hi")).settled).status).toBe("completed");
  return source;
}

const EARLIER = ["List the files here", "Let me look.", "marker.txt", "NOTOOL say hi", "hello from fake"];

/** The history in the first request since `before` that carried `prompt`. */
function sentWith(b: HandoffBed, before: number, prompt: string): string {
  return historyOf(b.since(before).find((r) => JSON.stringify(r.body).includes(prompt))!);
}

function carries(history: string) {
  for (const text of EARLIER) expect(history).toContain(text);
}

describe.runIf(found)("handoff between claude-code and codex", () => {
  // A family's own history is rewritten from Brain's log in its native format: its shell call goes back as a call
  // and its result.
  it.each([
    {
      family: "claude-code",
      file: "transcript",
      dir: "claude/projects",
      lost: /Claude Code transcript .* is missing/,
      result: '"tool_result"',
    },
    {
      family: "codex",
      file: "rollout",
      dir: "codex/sessions",
      lost: /Codex rollout .* is missing/,
      result: "function_call_output",
    },
  ])(
    "$family rebuild: a lost $file is rewritten from the log; the next turn carries the history",
    async ({ family, dir, lost, result }) => {
      const b = await start();
      const source = await shellConversation(b, family);
      const t = await b.restart();
      rmSync(join(t.store.paths(source.id).native, dir), { recursive: true, force: true });
      const failed = await (await (await t.brain.session(source.id)).prompt("NOTOOL one")).settled;
      expect(failed.error?.message).toMatch(lost);
      expect((await t.brain.rebuild(source.id)).seeded.how).toBe("native");
      const before = b.sandbox.provider.requests.length;
      const again = await t.brain.session(source.id);
      expect((await (await again.prompt("NOTOOL two")).settled).status).toBe("completed");
      const history = sentWith(b, before, "NOTOOL two");
      carries(history);
      expect(history).toContain(result);
    },
  );

  // Each family seeds the other natively; the other family's shell call goes over as text.
  it.each([
    {
      from: "codex",
      to: "claude-code",
      title: "Claude's first request holds Codex's turns",
      call: "exec_command",
    },
    { from: "claude-code", to: "codex", title: "Codex's first request holds Claude's turns", call: "Bash" },
  ])("$from → $to: $title, its $call call carried as text", async ({ from, to, call }) => {
    const b = await start();
    const source = await shellConversation(b, from);
    const moved = await b.t.brain.handoff(source.id, { to });
    expect((await b.t.brain.record(moved.id)).seeded?.how).toBe("native");
    const before = b.sandbox.provider.requests.length;
    expect((await (await moved.prompt("NOTOOL and now?")).settled).status).toBe("completed");
    const history = sentWith(b, before, "NOTOOL and now?");
    carries(history);
    expect(history).toContain(`[Called tool ${call} with`);
  });

  it("a runner → claude-code: Claude's first request holds the runner's turns and its tool call as text", async () => {
    const b = await start();
    const source = await b.t.brain.create({ harness: "echo", config: { tools: ["echo"] } });
    expect((await (await source.prompt("echo: KUMQUAT")).settled).status).toBe("completed");
    const moved = await b.t.brain.handoff(source.id, { to: "claude-code", model: "fake-model" });
    const before = b.sandbox.provider.requests.length;
    expect((await (await moved.prompt("NOTOOL and now?")).settled).status).toBe("completed");
    const history = sentWith(b, before, "NOTOOL and now?");
    expect(history).toContain("echo: KUMQUAT");
    expect(history).toContain("[Called tool echo with");
    expect(history).toContain("echo returned: KUMQUAT");
  });

  it("runners/pi → claude-code: Claude's first request holds pi's turns as Claude builds them, its tool call as text", async () => {
    const b = await start();
    const source = await b.t.brain.create({
      harness: "pi",
      config: { model: "anthropic/fake-model", tools: ["echo"] },
    });
    const call = 'CALL echo {"value":"KUMQUAT"}';
    expect((await (await source.prompt(call)).settled).status).toBe("completed");
    expect((await (await source.prompt("NOTOOL say hi")).settled).status).toBe("completed");
    // pi really made the call through Brain: the log has it with its result.
    const logged = await events(source);
    expect(logged.find((e) => e.type === "tool.call")?.data).toMatchObject({ name: "echo" });
    const moved = await b.t.brain.handoff(source.id, { to: "claude-code", model: "fake-model" });
    expect((await b.t.brain.record(moved.id)).seeded?.how).toBe("native");
    const before = b.sandbox.provider.requests.length;
    const outcome = await (await moved.prompt("NOTOOL and now?")).settled;
    expect(outcome.status, JSON.stringify(outcome.error)).toBe("completed");
    const request = b.since(before).find((r) => JSON.stringify(r.body).includes("NOTOOL and now?"))!;
    const history = historyOf(request);
    // The history is JSON: the prompt's quotes are escaped in it.
    const escaped = JSON.stringify(call).slice(1, -1);
    for (const text of [escaped, "Let me call.", "KUMQUAT", "done", "NOTOOL say hi", "hello from fake"]) {
      expect(history).toContain(text);
    }
    expect(history).toContain("[Called tool echo with");
    // As Claude builds a conversation: Messages API turns, user and assistant alternating, each earlier prompt a
    // user message of its own, then the new prompt last.
    // (Claude Code also sends its agent and skill list as a trailing "system" entry: not a turn.)
    const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages.filter(
      (m) => m.role === "user" || m.role === "assistant",
    );
    const roles = messages.map((m) => m.role);
    for (let i = 1; i < roles.length; i++) expect(roles[i]).not.toBe(roles[i - 1]);
    expect(roles[0]).toBe("user");
    expect(roles.at(-1)).toBe("user");
    const userTexts = messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
    expect(userTexts.findIndex((t) => t.includes("KUMQUAT"))).toBeLessThan(
      userTexts.findIndex((t) => t.includes("NOTOOL say hi")),
    );
    expect(JSON.stringify(messages.at(-1)!.content)).toContain("NOTOOL and now?");
  });
});
