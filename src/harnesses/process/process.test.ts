// The ProcessFactory's rules, each against a tiny inline runner that keeps or breaks exactly one of them.
import { afterEach, describe, expect, it } from "vitest";
import type { ToolResult, ToolSchema } from "../../protocol/runner.js";
import { events, gatedTool, makeBrain, type TestBrain, textOf, waitForEvent } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import type { ToolService } from "../../tools/tool-service.js";
import { PASSED_VARIABLES } from "./environment.js";
import { ProcessFactory, type ProcessHarnessSpec } from "./factory.js";

/** What the inline runner answers to steer, interrupt, checkpoint (no files) and detach. */
const REPLY_EMPTY = 'reply(f.method === "checkpoint" ? [] : {})';

/** A runner in a few lines of JS. `onPrompt` runs in an async function with `f` (the frame), `reply`, `delta`,
 * `callTool`, `send`, `dir` (from open) and `fs` in scope; `once()` is true the first time per native dir. Like a
 * real runner it keeps each prompt in its native dir, so the fresh runner after a broken one resumes (a runner
 * that kept nothing would fail verified resume). */
function inlineRunner(onPrompt: string, onOpen = "reply({})", onOther = REPLY_EMPTY): string[] {
  return inlineRunnerArgs(
    `
let dir = "";
const waits = new Map();
const once = () => { const p = dir + "/.once"; if (fs.existsSync(p)) return false; fs.writeFileSync(p, ""); return true; };`,
    `
  if (!f.method) { waits.get(f.id)?.(f.result); return; }
  const delta = (text) => send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text } });
  const callTool = (id, name, args) => new Promise((res) => {
    waits.set(id, res);
    send({ attachment: f.attachment, turn: f.turn, id, method: "tool.call", params: { id, name, arguments: args } });
  });
  switch (f.method) {
    case "open": dir = f.params.dir; ${onOpen}; break;
    case "prompt": fs.appendFileSync(dir + "/prompts.jsonl", JSON.stringify(f.params.text) + "\\n"); (async () => { ${onPrompt} })(); break;
    default: ${onOther};
  }`,
  );
}

function runner(
  onPrompt: string,
  extra: Partial<ProcessHarnessSpec> = {},
  onOpen?: string,
  onOther?: string,
): ProcessFactory {
  return new ProcessFactory({
    name: "inline",
    command: process.execPath,
    args: inlineRunner(onPrompt, onOpen, onOther),
    ...extra,
  });
}

class SlowTool implements ToolService {
  active = 0;
  maxActive = 0;
  async list(): Promise<ToolSchema[]> {
    return [{ name: "slow", input_schema: { type: "object" } }];
  }
  async call(): Promise<ToolResult> {
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    await new Promise((resolve) => setTimeout(resolve, 20));
    this.active--;
    return { content: [{ type: "text", text: "done" }], is_error: false };
  }
}

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

async function oneTurn(factory: ProcessFactory, text = "go", tools: string[] = []) {
  t = makeBrain({ factories: [factory] });
  const session = await t.brain.create({ harness: "inline", config: { tools } });
  const turn = await session.prompt(text);
  return { session, outcome: await turn.settled, turn: turn.turn };
}

describe("the runner's environment", () => {
  it("holds only the minimal variables, NO_COLOR=1 and the entry's additions, never Brain's secrets", async () => {
    process.env.OPENAI_API_KEY = "sk-must-not-leak";
    process.env.BRAIN_TEST_OTHER = "also-not";
    try {
      const factory = runner("delta(JSON.stringify(process.env)); reply({});", {
        env: { RUNNER_FLAG: "on" },
      });
      const { session } = await oneTurn(factory);
      const env = JSON.parse(textOf(await events(session))) as Record<string, string>;
      expect(env.NO_COLOR).toBe("1");
      expect(env.RUNNER_FLAG).toBe("on");
      expect(env.PATH).toBe(process.env.PATH);
      expect(env.OPENAI_API_KEY).toBeUndefined();
      expect(env.BRAIN_TEST_OTHER).toBeUndefined();
      const allowed: string[] = [...PASSED_VARIABLES];
      // Node itself may add a few of its own (none of Brain's) to process.env.
      const foreign = Object.keys(env).filter(
        (k) => !allowed.includes(k) && !["NO_COLOR", "RUNNER_FLAG"].includes(k),
      );
      expect(foreign.filter((k) => k in process.env)).toEqual([]);
    } finally {
      delete process.env.OPENAI_API_KEY;
      delete process.env.BRAIN_TEST_OTHER;
    }
  });
});

describe("broken runners abort the turn with brain_error; the session stays usable", () => {
  it.each([
    ["garbage on stdout", 'process.stdout.write("this is not json\\n");', /not JSON/],
    ["a frame over 4 MiB", 'process.stdout.write("x".repeat(5 << 20));', /capped at 4 MiB/],
    [
      "an unknown field",
      'send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text: "x" }, extra: 1 });',
      /Unrecognized key.*extra/,
    ],
    [
      "a reply that echoes the wrong turn",
      'send({ attachment: f.attachment, turn: "other", id: f.id, result: {} });',
      /carried turn "other"/,
    ],
    [
      "an exit mid-turn",
      'delta("partial"); process.stderr.write("boom: the runner gave up\\n"); process.exit(3);',
      /exited with code 3.*boom: the runner gave up/s,
    ],
    [
      "a stdout closed while the runner lives on",
      'delta("partial"); fs.closeSync(1); setInterval(() => {}, 1000);',
      /runner "inline" closed its stdout/,
    ],
  ])("%s", async (_name, misbehave, message) => {
    const { session, outcome } = await oneTurn(
      runner(`if (once()) { ${misbehave} } else { delta("fine"); reply({}); }`),
    );
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.code).toBe("brain_error");
    expect(outcome.error?.message).toMatch(message);
    const next = await session.prompt("again");
    expect(await next.settled).toMatchObject({ status: "completed" });
    expect(textOf(await events(session), next.turn)).toBe("fine");
  });

  it("drains a flood of stderr and keeps it out of the log", async () => {
    const { session, outcome } = await oneTurn(
      runner('process.stderr.write("noise ".repeat(200000)); delta("ok"); reply({});'),
    );
    expect(outcome.status).toBe("completed");
    expect(JSON.stringify(await events(session))).not.toContain("noise");
  });

  it("gives up on a runner that never answers open, and says so", async () => {
    const factory = runner("reply({});", { timeouts: { openMs: 300 } }, "/* never answers */");
    const { outcome } = await oneTurn(factory);
    expect(outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(outcome.error?.message).toMatch(/did not answer "open" within 0.3 s/);
  });

  it("kills a runner that ignores an interrupt, settles the turn as interrupted, and starts afresh", async () => {
    const factory = runner('if (once()) { delta("stuck"); } else { delta("fresh"); reply({}); }', {
      timeouts: { interruptGraceMs: 300 },
    });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "inline" });
    const turn = await session.prompt("go");
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    const warnings = (await events(session)).filter((e) => e.type === "harness.warning");
    expect(warnings.map((e) => (e.data as { message: string }).message).join()).toMatch(/did not settle/);
    // No wait for the killed runner's exit: the next prompt, sent at once, starts a fresh runner.
    const next = await session.prompt("again");
    expect((await next.settled).status).toBe("completed");
  });

  it("names a runner program that is not installed, and a runner script that is not built", async () => {
    const missing = new ProcessFactory({ name: "inline", command: "no-such-runner-binary-xyz", args: [] });
    expect((await oneTurn(missing)).outcome.error?.message).toMatch(
      /"no-such-runner-binary-xyz" is not on PATH/,
    );
    await t.cleanup();
    const unbuilt = new ProcessFactory({
      name: "inline",
      command: "node",
      args: ["runners/nope/dist/main.js"],
    });
    expect((await oneTurn(unbuilt)).outcome.error?.message).toMatch(/runner script .* does not exist/);
  });
});

describe("protocol mistakes that are only warnings", () => {
  it("logs a reply for an unknown id and a frame for an unknown attachment, and goes on", async () => {
    const { session, outcome } = await oneTurn(
      runner(`
        send({ attachment: f.attachment, turn: f.turn, id: "9999", result: {} });
        send({ attachment: "nobody", turn: f.turn, event: "assistant.delta", data: { text: "lost" } });
        delta("fine"); reply({});`),
    );
    expect(outcome.status).toBe("completed");
    const warnings = (await events(session))
      .filter((e) => e.type === "harness.warning")
      .map((e) => (e.data as { message: string }).message);
    expect(warnings.join("\n")).toMatch(/unknown request id "9999"/);
    expect(warnings.join("\n")).toMatch(/unknown attachment "nobody"/);
  });

  it("logs a few of a turn's warnings, each quoting at most 200 characters of the runner's, and counts the rest", async () => {
    const { session, outcome } = await oneTurn(
      runner(`
        for (let i = 0; i < 20; i++) send({ attachment: f.attachment, turn: f.turn, id: "x".repeat(256 << 10) + i, result: {} });
        for (let i = 0; i < 200; i++) send({ attachment: f.attachment, turn: "gone" + i, event: "assistant.delta", data: { text: "late" } });
        reply({});`),
    );
    expect(outcome.status).toBe("completed");
    const warnings = (await events(session))
      .filter((e) => e.type === "harness.warning")
      .map((e) => (e.data as { message: string }).message);
    // The 20 long ids are one warning once clipped; then 19 of the deltas'; the other 200 are counted.
    expect(warnings).toHaveLength(21);
    expect(warnings[0]).toBe(`reply for unknown request id "${"x".repeat(200)}…" ignored`);
    expect(Math.max(...warnings.map((w) => w.length))).toBeLessThan(300);
    expect(warnings[20]).toBe('runner "inline": 200 more warnings like the ones above, not logged');
  });
});

describe("null results, as a Go runner encodes a nil map or slice", () => {
  it("are the empty result, as the seed's Go host decodes them: a prompt, a steer, a checkpoint of no files", async () => {
    const factory = runner(
      'delta("waiting"); waits.set("steered", () => reply(null));',
      {},
      "reply(null)",
      'reply(null); if (f.method === "steer") waits.get("steered")();',
    );
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "inline" });
    const turn = await session.prompt("go");
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.steer("done");
    expect((await turn.settled).status).toBe("completed");
    expect((await session.checkpoint()).files).toEqual([]);
  });
});

describe("reverse tool calls", () => {
  it("runs at most 32 at once per runner and drops none", async () => {
    const slow = new SlowTool();
    const factory = runner(`
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => callTool("c" + i, "slow", {})));
      delta(String(results.filter((r) => !r.is_error).length)); reply({});`);
    t = makeBrain({ factories: [factory], tools: [slow] });
    const session = await t.brain.create({ harness: "inline", config: { tools: ["slow"] } });
    await (await session.prompt("go")).settled;
    const all = await events(session);
    expect(textOf(all)).toBe("40");
    expect(slow.maxActive).toBe(32);
    expect(all.filter((e) => e.type === "tool.call")).toHaveLength(40);
    expect(all.filter((e) => e.type === "tool.result")).toHaveLength(40);
  });
});

describe("shared hosts", () => {
  it("count 32 tool calls in flight per session: one session's waiting calls hold back no other's", async () => {
    const { tools: gated, open } = gatedTool();
    const factory = runner(
      `const [n, tool] = f.params.text === "many" ? [32, "gated"] : [1, "echo"];
      const results = await Promise.all(Array.from({ length: n }, (_, i) => callTool(f.turn + i, tool, { value: "v" })));
      delta(String(results.length)); reply({});`,
      { shared: true },
    );
    t = makeBrain({ factories: [factory], tools: [gated] });
    const a = await t.brain.create({ harness: "inline", config: { tools: ["gated"] } });
    const b = await t.brain.create({ harness: "inline", config: { tools: ["echo"] } });
    const many = await a.prompt("many");
    await waitForEvent(
      a,
      (e) => e.type === "tool.call" && (e.data as { id: string }).id === `${many.turn}31`,
    );
    const one = await b.prompt("one");
    expect((await one.settled).status).toBe("completed");
    open();
    expect((await many.settled).status).toBe("completed");
    expect(textOf(await events(a), many.turn)).toBe("32");
  });

  it("serve many sessions from one process, one attachment each; detach releases one", async () => {
    const factory = runner("delta(String(process.pid)); reply({});", { shared: true });
    t = makeBrain({ factories: [factory] });
    const a = await t.brain.create({ harness: "inline" });
    const b = await t.brain.create({ harness: "inline" });
    const pids = [];
    for (const s of [a, b]) {
      const turn = await s.prompt("pid?");
      await turn.settled;
      pids.push(textOf(await events(s), turn.turn));
    }
    expect(pids[0]).toBe(pids[1]);
    await t.brain.closeSession(a.id);
    const turn = await b.prompt("still there?");
    expect((await turn.settled).status).toBe("completed");
    expect(textOf(await events(b), turn.turn)).toBe(pids[0]);
  });

  it("fail only the open a shared runner does not answer in time; its other sessions go on", async () => {
    // The second open is never answered; the held turn of the first session is answered once that open is given up
    // (its detach), so it completes only if the runner was left running.
    const factory = runner(
      "globalThis.held = f;",
      // Time for the first open to be answered by a runner slow to start (a loaded machine); the second never is.
      { shared: true, timeouts: { openMs: 3_000 } },
      "globalThis.opens = (globalThis.opens ?? 0) + 1; if (globalThis.opens === 1) reply({});",
      `reply(f.method === "checkpoint" ? [] : {});
      const held = globalThis.held;
      if (f.method === "detach" && held) send({ attachment: held.attachment, turn: held.turn, id: held.id, result: {} });`,
    );
    t = makeBrain({ factories: [factory] });
    const b = await t.brain.create({ harness: "inline" });
    const held = await b.prompt("held");
    await waitForEvent(b, (e) => e.type === "turn.started");
    const a = await t.brain.create({ harness: "inline" });
    const failed = await (await a.prompt("hi")).settled;
    expect(failed.status).toBe("failed");
    expect(failed.error?.message).toMatch(/did not answer "open" within 3 s/);
    expect((await held.settled).status).toBe("completed");
  });

  it("let go of an interrupted turn a shared runner does not settle, not of the runner: other sessions go on", async () => {
    // The runner ignores a's interrupt; b's held turn is answered at a's detach: only a runner left running does.
    const factory = runner(
      'if (f.params.text === "held") { globalThis.held = f; delta("held"); } else if (f.params.text === "again") { delta("back"); reply({}); } else delta("stuck");',
      { shared: true, verifyHistory: false, timeouts: { interruptGraceMs: 300 } },
      undefined,
      `reply(f.method === "checkpoint" ? [] : {}); const h = globalThis.held;
      if (f.method === "detach" && h) send({ attachment: h.attachment, turn: h.turn, id: h.id, result: {} });`,
    );
    t = makeBrain({ factories: [factory] });
    const a = await t.brain.create({ harness: "inline" });
    const b = await t.brain.create({ harness: "inline" });
    const held = await b.prompt("held");
    await waitForEvent(b, (e) => e.type === "assistant.delta");
    const stuck = await a.prompt("stuck");
    await waitForEvent(a, (e) => e.type === "assistant.delta");
    await a.interrupt();
    expect((await stuck.settled).status).toBe("interrupted");
    expect((await held.settled).status).toBe("completed");
    const again = await a.prompt("again");
    expect((await again.settled).status).toBe("completed");
    expect(textOf(await events(a), again.turn)).toBe("back");
  });

  it("quote a bad frame only to the session it names, and their stderr to none: it may hold any session's text", async () => {
    const factory = runner(
      `if (f.params.text === "waits") return;
      process.stderr.write("working on: " + f.params.text + "\\n");
      send({ attachment: f.attachment, turn: f.turn, event: "assistant.message", data: { text: f.params.text }, extra: 1 });`,
      { shared: true },
    );
    t = makeBrain({ factories: [factory] });
    const a = await t.brain.create({ harness: "inline" });
    const b = await t.brain.create({ harness: "inline" });
    const waiting = await b.prompt("waits");
    await waitForEvent(b, (e) => e.type === "turn.started");
    const broken = await (await a.prompt("a's private words")).settled;
    expect(broken.error?.message).toMatch(/Unrecognized key: "extra" in .*a's private words/);
    const other = await waiting.settled;
    expect(other.status).toBe("failed");
    expect(other.error?.message).toBe("protocol violation on stdout, in a frame not quoted here");
    expect(JSON.stringify(await events(b))).not.toContain("private");
  });

  it("drop a closed session's late frames: no other session hears of them", async () => {
    // Like an SDK runner whose model stream has not noticed the abort yet: the closed session's turn writes on. Its
    // frames come before the next turn's of another session, after Brain has let the attachment go.
    const factory = runner(
      `const late = globalThis.slow && { attachment: globalThis.slow.attachment, turn: globalThis.slow.turn, event: "assistant.delta", data: { text: "late" } };
      if (f.params.text === "slow") globalThis.slow = f;
      else { if (late) { send(late); send(late); } delta("quick"); reply({}); }`,
      { shared: true },
    );
    t = makeBrain({ factories: [factory] });
    const a = await t.brain.create({ harness: "inline" });
    const b = await t.brain.create({ harness: "inline" });
    await (await b.prompt("quick")).settled;
    await a.prompt("slow");
    await waitForEvent(a, (e) => e.type === "turn.started");
    await t.brain.closeSession(a.id);
    const turn = await b.prompt("quick");
    expect((await turn.settled).status).toBe("completed");
    expect((await events(b)).filter((e) => e.type === "harness.warning")).toEqual([]);
  });
});
