// What one session, or a dead process, may not do to the others: a prompt too large to frame fails alone on a
// shared runner, and a runner's whole process group goes when the runner is killed, exits or Brain itself is.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ToolService } from "../../core/tools.js";
import {
  echoFactory,
  events,
  gatedTool,
  makeBrain,
  type TestBrain,
  textOf,
  waitForEvent,
} from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { alive, until } from "../../testing/processes.js";
import { ProcessFactory } from "./factory.js";
import { RunnerProcess } from "./runner-process.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

const root = join(import.meta.dirname, "../../..");

describe("frames too large to send", () => {
  it("fail the one turn that sent it; the shared runner and its other sessions go on", async () => {
    t = makeBrain({ factories: [echoFactory({ shared: true })] });
    const a = await t.brain.create({ harness: "echo" });
    const b = await t.brain.create({ harness: "echo" });
    const warm = await b.prompt("before");
    expect((await warm.settled).status).toBe("completed");

    const huge = await a.prompt("x".repeat(5 << 20));
    const outcome = await huge.settled;
    expect(outcome.status).toBe("failed");
    const settledEvent = (await events(a)).find((e) => e.type === "turn.settled" && e.turn === huge.turn);
    expect(JSON.stringify(settledEvent?.data)).toContain("4194304-byte limit");

    const after = await b.prompt("after");
    expect((await after.settled).status).toBe("completed");
    expect(textOf(await events(b), after.turn)).toContain("after");
    // The session that sent too much is not broken either.
    const again = await a.prompt("small");
    expect((await again.settled).status).toBe("completed");
  });

  it("a tool result too large for a frame reaches the runner cut as the log holds it, and the log says so", async () => {
    const big: ToolService = {
      list: async () => [{ name: "big", description: "5 MiB of text", input_schema: { type: "object" } }],
      call: async () => ({ content: [{ type: "text", text: "y".repeat(5 << 20) }], is_error: false }),
    };
    t = makeBrain({ factories: [echoFactory()], tools: [big] });
    const session = await t.brain.create({ harness: "echo", config: { tools: ["big"] } });
    const turn = await session.prompt('call the tool "big" with {}');
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(all.find((e) => e.type === "harness.warning")).toBeUndefined();
    const result = all.find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({ is_error: false, truncated: { total_chars: 5 << 20 } });
    expect(textOf(all, turn.turn)).toContain("characters of this tool result left out");
  });
});

describe("a runner that does not read its stdin", () => {
  it("is stopped once what Brain wrote to it unread passes the bound, failing its turn, instead of holding it all", async () => {
    const args = inlineRunnerArgs(
      "setInterval(() => {}, 1 << 30);",
      `
  if (f.method !== "prompt") return reply({});
  process.stdin.pause(); // nothing more is read, the answers to its calls included
  const value = "v".repeat(64 * 1024);
  for (let i = 0; i < 200; i++)
    send({ attachment: f.attachment, turn: f.turn, id: "c" + i, method: "tool.call", params: { id: "c" + i, name: "echo", arguments: { value } } });`,
    );
    const factory = new ProcessFactory({
      name: "deaf",
      command: process.execPath,
      args,
      spares: 0,
      verifyHistory: false,
      maxUnreadInput: 1 << 20,
      timeouts: { interruptGraceMs: 500 },
    });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "deaf", config: { tools: ["echo"] } });
    const turn = await session.prompt("go");
    // Without the bound all 200 answers (12.5 MiB) wait in Brain for a runner that lives on: only the interrupt
    // ends the turn then.
    const last = (e: { type: string; data: unknown }) =>
      e.type === "tool.result" && (e.data as { id: string }).id === "c199";
    await Promise.race([turn.settled, waitForEvent(session, last)]);
    await session.interrupt().catch(() => {});
    const outcome = await turn.settled;
    expect(outcome.status).toBe("failed");
    expect(JSON.stringify(outcome)).toMatch(
      /runner \\"deaf\\" did not read its stdin: \d+ bytes from Brain were waiting unread \(the limit is 1048576 bytes\)/,
    );
  });
});

describe("tool calls past those in flight", () => {
  it("wait up to the bound; one past it is refused at once with an error result, and the turn goes on", async () => {
    const args = inlineRunnerArgs(
      "const waits = new Map();",
      `
  if (!f.method) return waits.get(f.id)?.(f.result);
  if (f.method !== "prompt") return reply({});
  // 32 run, 8 may wait, 5 more are one too many: all sent at once, as a runner that does not count its calls does.
  const results = await Promise.all(Array.from({ length: 45 }, (_, i) => new Promise((done) => {
    waits.set("c" + i, done);
    send({ attachment: f.attachment, turn: f.turn, id: "c" + i, method: "tool.call", params: { id: "c" + i, name: "gated", arguments: { i } } });
  })));
  const refused = results.filter((r) => r.is_error && r.content[0].text.startsWith("tool call refused: 8 calls"));
  send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text: String(refused.length) } });
  reply({});`,
    );
    const { tools: gated, open } = gatedTool();
    const factory = new ProcessFactory({
      name: "eager",
      command: process.execPath,
      // The handler awaits its calls' results.
      args: args.map((arg) => arg.replace("function handle(f)", "async function handle(f)")),
      spares: 0,
      verifyHistory: false,
      maxToolCallsWaiting: 8,
    });
    t = makeBrain({ factories: [factory], tools: [gated] });
    const session = await t.brain.create({ harness: "eager", config: { tools: ["gated"] } });
    const turn = await session.prompt("go");
    const running = (e: { type: string; data: unknown }) =>
      e.type === "tool.call" && (e.data as { id: string }).id === "c31";
    await waitForEvent(session, running);
    open();
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(textOf(all, turn.turn)).toBe("5");
    // The refused calls never ran: only the 40 that ran or waited are in the log, each with its result.
    expect(all.filter((e) => e.type === "tool.call")).toHaveLength(40);
    expect(all.filter((e) => e.type === "tool.result")).toHaveLength(40);
    expect(JSON.stringify(all.filter((e) => e.type === "harness.warning"))).toContain("refused: 8 calls");
  });
});

describe.skipIf(process.platform !== "linux")("process groups", () => {
  it("a killed runner takes what it started with it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-pgrp-"));
    try {
      const pidFile = join(dir, "child.pid");
      const runner = new RunnerProcess({
        name: "forker",
        command: "/bin/sh",
        args: ["-c", `sleep 300 & echo $! > ${pidFile}; wait`],
      });
      await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "");
      const child = Number(readFileSync(pidFile, "utf8"));
      expect(alive(child)).toBe(true);
      runner.kill();
      await until(() => !alive(child));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a runner that exits while a process it started holds its stdout fails the turn at once, naming its exit code; that process goes too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-leaver-"));
    const pidFile = join(dir, "helper.pid");
    try {
      const script = join(dir, "runner.mjs");
      writeFileSync(script, leavingRunner(pidFile));
      // Started by the spawn host, as Brain starts runners; CliProcess's tests cover a child forked from Brain.
      const factory = new ProcessFactory({
        name: "leaver",
        command: process.execPath,
        args: [script],
        spares: 0,
        verifyHistory: false,
      });
      t = makeBrain({ factories: [factory] });
      const session = await t.brain.create({ harness: "leaver" });
      const turn = await session.prompt("go");
      // Without the fix this waits for the helper's `sleep 300`: the test's timeout, not an assertion, catches it.
      expect((await turn.settled).status).toBe("failed");
      const log = await events(session);
      const settled = log.find((e) => e.type === "turn.settled" && e.turn === turn.turn);
      expect(JSON.stringify(settled?.data)).toMatch(/runner \\"leaver\\" exited with code 3/);
      // The delta it wrote the instant before it exited is in the log: the drain after the exit read it.
      const helper = Number(/^helper (\d+)$/.exec(textOf(log, turn.turn))?.[1]);
      expect(helper).toBeGreaterThan(0);
      await until(() => !alive(helper));
    } finally {
      killPidIn(pidFile);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a runner exits once the brain process that started it is SIGKILLed", async () => {
    const home = mkdtempSync(join(tmpdir(), "brain-sigkill-"));
    try {
      const config = join(home, "brain.config.json");
      writeFileSync(config, JSON.stringify({ defaults: { options: { delay_ms: 200 } } }));
      const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
      const brain = spawn(
        process.execPath,
        [join(root, "bin/brain.js"), "run", "--config", config, "--json", words],
        { env: { ...process.env, BRAIN_HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
      );
      // The first streamed word means the runner is up and mid-turn.
      await new Promise<void>((resolve) => {
        brain.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("assistant.delta")) resolve();
        });
      });
      const runners = childrenOf(brain.pid!);
      expect(runners.length).toBeGreaterThan(0);
      brain.kill("SIGKILL");
      for (const pid of runners) await until(() => !alive(pid));
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

/**
 * A runner that, at its first prompt, starts a helper on its own stdio (as `tool &` does), writes the helper's pid
 * as a delta and exits with code 3 at once. The pid also goes to `pidFile`, for the cleanup of a failed test.
 */
function leavingRunner(pidFile: string): string {
  return `
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
const send = (frame, then) => process.stdout.write(JSON.stringify(frame) + "\\n", then);
let buffered = "";
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  for (let nl = buffered.indexOf("\\n"); nl >= 0; nl = buffered.indexOf("\\n")) {
    const frame = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    if (frame.method === "prompt") {
      const helper = spawn("sleep", ["300"], { stdio: "inherit" });
      writeFileSync(${JSON.stringify(pidFile)}, String(helper.pid));
      const delta = { attachment: frame.attachment, turn: frame.turn, event: "assistant.delta", data: { text: "helper " + helper.pid } };
      send(delta, () => process.exit(3));
    } else if (frame.id) {
      send({ attachment: frame.attachment, id: frame.id, ...(frame.turn ? { turn: frame.turn } : {}), result: {} });
    }
  }
});
`;
}

function killPidIn(file: string): void {
  try {
    process.kill(Number(readFileSync(file, "utf8")), "SIGKILL");
  } catch {}
}

/** The pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {}
  }
  return found;
}

describe("a tool call whose arguments are null", () => {
  it("runs with no arguments, as the seed's Go host reads a Go runner's nil map, instead of killing the runner", async () => {
    const args = inlineRunnerArgs(
      "const waits = new Map();",
      `
  if (!f.method) return waits.get(f.id)?.(f.result);
  if (f.method !== "prompt") return reply({});
  const result = await new Promise((done) => {
    waits.set("c1", done);
    send({ attachment: f.attachment, turn: f.turn, id: "c1", method: "tool.call", params: { id: "call-1", name: "echo", arguments: null } });
  });
  send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text: "answered: " + result.is_error } });
  reply({});`,
    );
    const factory = new ProcessFactory({
      name: "go-like",
      command: process.execPath,
      args: args.map((arg) => arg.replace("function handle(f)", "async function handle(f)")),
      spares: 0,
      verifyHistory: false,
    });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "go-like", config: { tools: ["echo"] } });
    const turn = await session.prompt("go");
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    const call = all.find((e) => e.type === "tool.call");
    expect(call?.data).toEqual({ id: "call-1", name: "echo", arguments: {} });
    expect(all.some((e) => e.type === "tool.result")).toBe(true);
    expect(textOf(all, turn.turn)).toContain("answered: ");
  });
});

describe("a runner that dies in the middle of writing a frame", () => {
  it("fails the turn naming its exit code as well as the half frame, and keeps what it wrote before", async () => {
    const args = inlineRunnerArgs(
      "",
      `
  if (f.method !== "prompt") return reply({});
  send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text: "before" } });
  send({ attachment: f.attachment, turn: f.turn, id: "c1", method: "tool.call", params: { id: "call-1", name: "echo", arguments: { text: "x" } } });
  process.stdout.write('{"attachment":"' + f.attachment + '","tu', () => process.exit(3));`,
    );
    const factory = new ProcessFactory({
      name: "torn",
      command: process.execPath,
      args,
      spares: 0,
      verifyHistory: false,
    });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "torn", config: { tools: ["echo"] } });
    const turn = await session.prompt("go");
    const outcome = await turn.settled;
    expect(outcome.status).toBe("failed");
    // Framing alone blamed the stream for what the runner's crash did.
    expect(JSON.stringify(outcome)).toMatch(
      /runner \\"torn\\" exited with code 3; its stdout stream ended in the middle of a frame/,
    );
    const all = await events(session);
    expect(textOf(all, turn.turn)).toContain("before");
    expect(all.filter((e) => e.type === "tool.call")).toHaveLength(1);
  });
});
