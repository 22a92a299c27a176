// Warm runners: a new session opens a process started before it was asked for; a spare that dies is replaced
// without any session noticing; closing the factory kills the spares and what they started.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../../core/session.js";
import { events, makeBrain, type TestBrain, tempDir, textOf, waitForEvent } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { alive, until } from "../../testing/processes.js";
import { ProcessFactory, type ProcessHarnessSpec } from "./factory.js";

/** Logs `start <pid>` when it boots (and `child <pid>` for a sleeper it starts), `open <pid>` when opened. */
const RUNNER = inlineRunnerArgs(
  `
import { spawn } from "node:child_process";
const log = (line) => fs.appendFileSync(process.env.PID_LOG, line + "\\n");
log("start " + process.pid);
if (process.env.SLEEPER) log("child " + spawn("sleep", ["300"], { stdio: "ignore" }).pid);`,
  `
  if (f.method === "open") log("open " + process.pid);
  if (f.method === "prompt") send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text: "pid " + process.pid } });
  reply(f.method === "checkpoint" ? [] : {});`,
);

/** Streams a delta for a prompt and answers it only when a steer arrives: a turn that lasts until told to end. */
const HOLDING = inlineRunnerArgs(
  "let held;",
  `
  if (f.method === "prompt") {
    send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text: "working" } });
    held = reply;
    return;
  }
  if (f.method === "steer") { held?.({}); held = undefined; }
  reply(f.method === "checkpoint" ? [] : {});`,
);

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

function warmFactory(pidLog: string, env: Record<string, string> = {}): ProcessFactory {
  return new ProcessFactory({
    name: "warm",
    command: process.execPath,
    args: RUNNER,
    env: { PID_LOG: pidLog, ...env },
  });
}

/** The pids the runners logged, by kind, in order. */
/** A pool of runners that hold each turn open until steered, replaced after the given delays. */
function holdingFactory(refill: Pick<ProcessHarnessSpec, "refillAfterMs" | "refillDelayMs">): ProcessFactory {
  return new ProcessFactory({ name: "warm", command: process.execPath, args: HOLDING, ...refill });
}

function logged(pidLog: string, kind: "start" | "open" | "child"): number[] {
  if (!existsSync(pidLog)) return [];
  return readFileSync(pidLog, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${kind} `))
    .map((line) => Number(line.slice(kind.length + 1)));
}

/** One turn on a session (which opens its harness on first use); returns the pid the runner answered from. */
async function turnOn(session: Session): Promise<number> {
  const turn = await session.prompt("hi");
  expect((await turn.settled).status).toBe("completed");
  return Number(textOf(await events(session), turn.turn).replace("pid ", ""));
}

describe("warm runners", () => {
  it("start no spare before the harness is first used, then open a new session on the spare", async () => {
    const pidLog = join(tempDir(), "pids");
    const factory = warmFactory(pidLog);
    t = makeBrain({ factories: [factory] });
    const first = await t.brain.create({ harness: "warm" });
    expect(factory.sparePids()).toEqual([]);

    const firstPid = await turnOn(first);
    // Started shortly after the first turn ended (refillDelayMs).
    await until(() => factory.sparePids().length === 1);
    const [spare] = factory.sparePids();
    expect(spare).not.toBe(firstPid);

    const second = await t.brain.create({ harness: "warm" });
    // The spare was started before the second session asked for a runner, and is the one it opened.
    expect(await turnOn(second)).toBe(spare);
    expect(logged(pidLog, "open")).toEqual([firstPid, spare]);
    // Taken, so replaced by a fresh one.
    await until(() => factory.sparePids().length === 1);
    expect(factory.sparePids()).not.toContain(spare);
  });

  it("start the replacement of a taken spare once the new session's first turn has ended, not while it runs", async () => {
    // Only the turn's end starts it here: the fallback for a session that never prompts is out of reach.
    const factory = holdingFactory({ refillAfterMs: 600_000, refillDelayMs: 0 });
    t = makeBrain({ factories: [factory] });
    const heldTurn = async (session: Session) => {
      const turn = await session.prompt("hi");
      await waitForEvent(session, (e) => e.type === "assistant.delta" && e.turn === turn.turn);
      return turn;
    };
    const first = await t.brain.create({ harness: "warm" });
    let turn = await heldTurn(first);
    expect(factory.sparePids()).toEqual([]);
    await first.steer("done");
    expect((await turn.settled).status).toBe("completed");
    await until(() => factory.sparePids().length === 1);
    const [spare] = factory.sparePids();

    const second = await t.brain.create({ harness: "warm" });
    turn = await heldTurn(second);
    // Taken by the second session, whose first turn is still running: its replacement would compete with it.
    expect(factory.sparePids()).toEqual([]);
    await second.steer("done");
    expect((await turn.settled).status).toBe("completed");
    await until(() => factory.sparePids().length === 1);
    expect(factory.sparePids()).not.toContain(spare);
  });

  it("start the replacement only refillDelayMs after the first turn ended, so it does not delay the turn's last commits", async () => {
    const factory = holdingFactory({ refillAfterMs: 600_000, refillDelayMs: 600_000 });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "warm" });
    const turn = await session.prompt("hi");
    await waitForEvent(session, (e) => e.type === "assistant.delta" && e.turn === turn.turn);
    await session.steer("done");
    expect((await turn.settled).status).toBe("completed");
    // The turn has settled in the log, and the replacement still waits out its delay.
    expect(factory.sparePids()).toEqual([]);
  });

  it("replace a taken spare all the same when the session that took it does not prompt", async () => {
    const factory = holdingFactory({ refillAfterMs: 0 });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "warm" });
    await session.start();
    await until(() => factory.sparePids().length === 1);
  });

  it("prestart: a factory without spares starts one runner ahead of the next session, which opens it", async () => {
    const pidLog = join(tempDir(), "pids");
    const factory = new ProcessFactory({
      name: "warm",
      command: process.execPath,
      args: RUNNER,
      env: { PID_LOG: pidLog },
      spares: 0,
    });
    t = makeBrain({ factories: [factory] });
    factory.prestart();
    // Its pid is known once the spawn host has started it.
    await until(() => factory.sparePids().length === 1);
    const [early] = factory.sparePids();
    const session = await t.brain.create({ harness: "warm" });
    expect(await turnOn(session)).toBe(early);
    // spares: 0, so nothing is started after it.
    expect(factory.sparePids()).toEqual([]);
    expect(logged(pidLog, "start")).toEqual([early]);
  });

  it("prestart: a runner no session took is killed when the factory closes", async () => {
    const factory = new ProcessFactory({ name: "warm", command: process.execPath, args: RUNNER, spares: 0 });
    factory.prestart();
    // Its pid is known once the spawn host has started it.
    await until(() => factory.sparePids().length === 1);
    const [early] = factory.sparePids();
    await factory.close();
    await until(() => !alive(early!));
  });

  it("replace a spare that died, and no session sees its death", async () => {
    const pidLog = join(tempDir(), "pids");
    const factory = warmFactory(pidLog);
    t = makeBrain({ factories: [factory] });
    const first = await t.brain.create({ harness: "warm" });
    await turnOn(first);
    await until(() => factory.sparePids().length === 1);
    const [spare] = factory.sparePids();
    await until(() => logged(pidLog, "start").includes(spare!));
    process.kill(spare!, "SIGKILL");

    const second = await t.brain.create({ harness: "warm" });
    expect(await turnOn(second)).not.toBe(spare);
    expect(logged(pidLog, "open")).not.toContain(spare);
    await turnOn(first);
    for (const session of [first, second]) {
      const trouble = (await events(session)).filter(
        (e) =>
          e.type === "harness.warning" ||
          (e.type === "turn.settled" && (e.data as { status?: string }).status !== "completed"),
      );
      expect(trouble).toEqual([]);
    }
    await until(() => factory.sparePids().length === 1);
    expect(factory.sparePids()).not.toContain(spare);
  });

  it("open a new session on a fresh runner when the spare it took hung, instead of failing its turn", async () => {
    const pidLog = join(tempDir(), "pids");
    const factory = new ProcessFactory({
      name: "warm",
      command: process.execPath,
      args: RUNNER,
      env: { PID_LOG: pidLog },
      timeouts: { openMs: 2000 },
    });
    t = makeBrain({ factories: [factory] });
    await turnOn(await t.brain.create({ harness: "warm" }));
    await until(() => factory.sparePids().length === 1);
    const [spare] = factory.sparePids();
    await until(() => logged(pidLog, "start").includes(spare!));
    // Hung while it waited: alive, never answering.
    process.kill(spare!, "SIGSTOP");
    try {
      const second = await t.brain.create({ harness: "warm" });
      expect(await turnOn(second)).not.toBe(spare);
      await until(() => !alive(spare!));
    } finally {
      if (alive(spare!)) process.kill(spare!, "SIGKILL");
    }
  });

  it.skipIf(process.platform !== "linux")("die with what they started when the factory closes", async () => {
    const pidLog = join(tempDir(), "pids");
    const factory = warmFactory(pidLog, { SLEEPER: "1" });
    t = makeBrain({ factories: [factory] });
    await turnOn(await t.brain.create({ harness: "warm" }));
    await until(() => factory.sparePids().length === 1);
    const [spare] = factory.sparePids();
    // The spare has booted and started its own child (the session's runner started one too).
    await until(() => logged(pidLog, "child").length === 2);
    const sleepers = logged(pidLog, "child");
    expect(alive(spare!)).toBe(true);
    expect(sleepers.every(alive)).toBe(true);

    await t.cleanup();
    t = undefined;
    expect(factory.sparePids()).toEqual([]);
    for (const pid of [spare!, ...sleepers]) await until(() => !alive(pid));
  });

  it("let a one-shot `brain run` close and exit 0 with a spare still idle", () => {
    const home = tempDir("brain-warm-run-");
    try {
      const root = join(import.meta.dirname, "../../..");
      const run = spawnSync(process.execPath, [join(root, "bin/brain.js"), "run", "hello"], {
        env: { ...process.env, BRAIN_HOME: home },
        encoding: "utf8",
        timeout: 120_000,
      });
      // 13 is Node's "unfinished top-level await": closing waited on a spare that no longer held the loop.
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain("hello");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
