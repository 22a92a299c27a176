// The fault matrix, log side: the host SIGKILLed mid-append, a full disk, and two writers on one session.
// Families: the runner `process` family (runners/echo streams as many deltas as a prompt has words, which is
// what fills a log quickly); the log is the host's, so the other families add nothing here.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Brain } from "../../src/core/brain.js";
import { HarnessRegistry } from "../../src/core/registry.js";
import type { SessionEvent } from "../../src/protocol/events.js";
import { type LogIO, nodeLogIO } from "../../src/store/fs/log-io.js";
import { FsSessionStore } from "../../src/store/fs/session-store.js";
import { echoFactory, makeBrain, type TestBrain, tempDir, textOf } from "../../src/testing/brain.js";
import { startTestDaemon, type TestDaemon } from "../../src/testing/daemon.js";
import { canMount, smallDisk } from "../../src/testing/small-disk.js";
import { BuiltinTools } from "../../src/tools/builtin.js";
import { ToolRouter } from "../../src/tools/router.js";
import { acknowledged, auditLog, expectWhole, note } from "./audit.js";
import { ROOT } from "./families.js";

const BRAIN = join(ROOT, "bin/brain.js");
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

/** `brain …` as a child process on `home`; its stdout lines, stderr and exit code. */
function brainProcess(home: string, args: string[]): ChildProcess {
  const child = spawn(process.execPath, [BRAIN, ...args], {
    env: { ...process.env, BRAIN_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => void child.kill("SIGKILL"));
  return child;
}

async function ran(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stdout, stderr };
}

describe("SIGKILL of the host mid-append", () => {
  it("process", async (cell) => {
    const home = tempDir("brain-faults-kill-");
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const child = brainProcess(home, ["run", "--json", "--session", "killed", words(15_000)]);
    // `brain run --json` prints each event once it is durable: what the host acknowledged.
    const acked: SessionEvent[] = [];
    let buffer = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (chunk: Buffer) => {
        buffer += chunk.toString();
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        for (const line of lines) if (line.trim()) acked.push(JSON.parse(line) as SessionEvent);
        if (acked.filter((e) => e.type === "assistant.delta").length >= 500) {
          child.kill("SIGKILL");
          resolve();
        }
      });
      child.on("close", () => reject(new Error("brain run ended before it was killed")));
    });
    await new Promise((resolve) => child.on("close", resolve));
    const file = join(home, "sessions/killed/events.jsonl");
    const atKill = auditLog(file, acked);
    // Reopening closes the turn the dead host left open.
    const t = makeBrain({ home });
    cleanups.push(() => t.cleanup());
    const session = await t.brain.session("killed");
    const next = await (await session.prompt("after the kill")).settled;
    await t.brain.close();
    const reopened = auditLog(file, acked);
    note(cell, { eventsLost: atKill.eventsLost + reopened.eventsLost, secretsFound: 0 });
    expect(atKill.corrupt).toEqual([]);
    expect(atKill.eventsLost).toBe(0);
    expect(expectWhole(reopened)).toEqual([]);
    expect(next.status).toBe("completed");
  });
});

const mountable = canMount() && process.env.FAULTS_NO_MOUNT !== "1";

/**
 * Where mount is not permitted, the log's LogIO runs out of room instead: a write that would take the log past
 * `capacity` bytes fails with ENOSPC, as on a full disk, and room comes back when the log is cut back (only the
 * event log is counted; the session files around it still fit).
 */
function fullLogIO(capacity: number): { io: LogIO; grow(): void } {
  let room = capacity;
  const io: LogIO = {
    ...nodeLogIO,
    write: async (fd, buffer, offset, length, position) => {
      if (position + length > room) {
        const err: NodeJS.ErrnoException = new Error("ENOSPC: no space left on device, write");
        err.code = "ENOSPC";
        throw err;
      }
      return nodeLogIO.write(fd, buffer, offset, length, position);
    },
  };
  return { io, grow: () => (room = Number.POSITIVE_INFINITY) };
}

/** A small disk: a 1 MiB tmpfs where mount works, a LogIO with 1 MiB of room where it does not. */
function fullDisk(): { brain(): TestBrain; grow(): void } {
  if (mountable) {
    const disk = smallDisk("1m", cleanups);
    return { brain: () => makeBrain({ home: disk.home }), grow: disk.grow };
  }
  const home = tempDir("brain-faults-full-");
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const { io, grow } = fullLogIO(1 << 20);
  const brain = (): TestBrain => {
    const store = new FsSessionStore(home, io);
    const b = new Brain({
      store,
      harnesses: new HarnessRegistry([echoFactory()]),
      tools: new ToolRouter([new BuiltinTools()]),
    });
    return { brain: b, home, store, cleanup: () => b.close() };
  };
  return { brain, grow };
}

describe("disk full", () => {
  // closed out on open, not only the last (item 2)
  it("process", async (cell) => {
    const disk = fullDisk();
    let t: TestBrain = disk.brain();
    cleanups.push(() => t.cleanup());
    const session = await t.brain.create({ harness: "echo" });
    const { seen, stop } = acknowledged(session);
    const prompt = words(40_000);
    const turn = await session.prompt(prompt);
    const outcome = await turn.settled;
    // Still full: the next turn must fail too, not start and hang open.
    const second = await Promise.race([
      session.prompt("while full").then((next) => next.settled),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 8_000)),
    ]).catch((err: Error) => ({ status: "refused", message: err.message }));
    stop();
    const file = t.store.paths(session.id).events;
    await t.brain.close();
    const full = auditLog(file, seen);
    // Room again: a restarted host closes every turn left open and takes new turns.
    disk.grow();
    t = disk.brain();
    const again = await t.brain.session(session.id);
    const next = await (await again.prompt("room again")).settled;
    await t.brain.close();
    const after = auditLog(file, seen);
    // Deltas after a failed append must not land: the logged text is a prefix of what the runner streamed.
    const logged = textOf(full.events, turn.turn);
    const holes = `echo #1: ${prompt}`.startsWith(logged) ? 0 : 1;
    note(cell, { eventsLost: full.eventsLost + after.eventsLost + holes, secretsFound: 0 });
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.message).toMatch(/ENOSPC|no space/i);
    expect(second, "a turn on a full disk must settle or be refused").toBeDefined();
    expect(holes).toBe(0);
    expect(expectWhole(after)).toEqual([]);
    expect(next.status, JSON.stringify(next.error)).toBe("completed");
  });

  // A child process cannot be given a LogIO: without mount this cell is skipped.
  it.runIf(mountable)("process (brain run at 100 %)", async (cell) => {
    const disk = smallDisk("1m", cleanups);
    const first = await ran(brainProcess(disk.home, ["run", "--session", "full", "hello"]));
    expect(first.code).toBe(0);
    try {
      execFileSync("dd", ["if=/dev/zero", `of=${join(disk.home, "filler")}`, "bs=64k"], { stdio: "ignore" });
    } catch {
      // dd stops with ENOSPC: the disk is full now
    }
    const result = await ran(brainProcess(disk.home, ["run", "--session", "full", "again"]));
    const audit = auditLog(join(disk.home, "sessions/full/events.jsonl"));
    note(cell, { eventsLost: audit.eventsLost, secretsFound: 0 });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/ENOSPC|no space/i);
  });
});

describe("two writers", () => {
  it("process", async (cell) => {
    const home = tempDir("brain-faults-two-");
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const d: TestDaemon = await startTestDaemon({ home });
    cleanups.push(() => d.cleanup());
    const client = d.client();
    const { id } = (await client.create({ harness: "echo" })) as { id: string };
    const session = await d.brain.session(id);
    const { seen, stop } = acknowledged(session);
    await (await session.prompt("from the daemon")).settled;
    const cli = await ran(brainProcess(home, ["run", "--session", id, "from cli"]));
    await (await session.prompt("daemon again")).settled;
    stop();
    await d.brain.closeSession(id);
    const audit = auditLog(join(home, "sessions", id, "events.jsonl"), seen);
    note(cell, { eventsLost: audit.eventsLost, secretsFound: 0 });
    expect(expectWhole(audit)).toEqual([]);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(/--server/);
  });
});
