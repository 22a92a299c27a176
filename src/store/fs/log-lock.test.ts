// One writer per log across processes: the lock names its owner, dies with it, and never stops readers.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { processStart } from "../../core/process-identity.js";
import type { NewEvent } from "../../protocol/events.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { acquireLogLock, type LogLock, LogLockedError } from "./log-lock.js";

const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t1", data: { text } });

let dir: string;
let file: string;
const opened: JsonlEventLog[] = [];
const children: ChildProcess[] = [];

async function open(): Promise<JsonlEventLog> {
  const log = await JsonlEventLog.open(file, "s1");
  opened.push(log);
  return log;
}

/** A live process that is not this one, standing in for another Brain. */
async function otherProcess(): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
  children.push(child);
  await new Promise((resolve, reject) => child.once("spawn", resolve).once("error", reject));
  return child as ChildProcess & { pid: number };
}

/** Writes the lock another process would hold. */
async function lockAs(record: Record<string, unknown>): Promise<void> {
  const full = { kind: "process", host: os.hostname(), nonce: "theirs", ...record };
  await fs.writeFile(`${file}.lock`, `${JSON.stringify(full)}\n`);
}

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "brain-lock-"));
  file = path.join(dir, "events.jsonl");
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.allSettled(opened.splice(0).map((l) => l.close()));
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await fs.rm(dir, { recursive: true, force: true });
});

describe("the log's lock", () => {
  it("refuses a second writer in this process, and keeps the log dense", async () => {
    const log = await open();
    await log.append([delta("a")]);
    await expect(open()).rejects.toThrow(/session s1 is already open in this process/);
    await log.append([delta("b")]);
    expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1, 2]);
  });

  it("refuses a writer while another live process holds the log, naming its pid", async () => {
    const child = await otherProcess();
    await lockAs({ pid: child.pid, start: processStart(child.pid) });
    const failure = open();
    await expect(failure).rejects.toBeInstanceOf(LogLockedError);
    // The session it is of, for a caller to tell its own from another's without reading the message.
    await expect(failure).rejects.toMatchObject({ code: "locked", session: "s1" });
    await expect(failure).rejects.toThrow(
      new RegExp(`session s1 is open in another Brain process \\(pid ${child.pid}\\)`),
    );
    expect(existsSync(file)).toBe(false); // refused before touching the log
  });

  it("tells a writer to go through the daemon when the daemon holds the log", async () => {
    const child = await otherProcess();
    await lockAs({ pid: child.pid, kind: "daemon", url: "http://127.0.0.1:7777" });
    const failure = open();
    await expect(failure).rejects.toThrow(/open in the Brain daemon at http:\/\/127\.0\.0\.1:7777/);
    await expect(failure).rejects.toThrow(/brain run --server http:\/\/127\.0\.0\.1:7777 --session s1/);
    await expect(failure).rejects.toThrow(/brain attach s1/);
  });

  it("takes over the lock of a holder that died", async () => {
    const child = await otherProcess();
    const start = processStart(child.pid);
    await new Promise((resolve) => {
      child.once("exit", resolve);
      child.kill("SIGKILL");
    });
    await lockAs({ pid: child.pid, start });
    const log = await open();
    await log.append([delta("a")]);
    expect(JSON.parse(await fs.readFile(`${file}.lock`, "utf8"))).toMatchObject({ pid: process.pid });
  });

  it.skipIf(processStart(process.pid) === undefined)(
    "takes over a lock whose pid now belongs to another process",
    async () => {
      const child = await otherProcess();
      // The holder had this pid once; the process there now started at another time.
      await lockAs({ pid: child.pid, start: `${processStart(child.pid)}0` });
      const log = await open();
      expect(log.lastSeq).toBe(0);
    },
  );

  it("lets one taker at a time remove a stale lock: a slow taker never removes the lock a faster one placed", async () => {
    const child = await otherProcess();
    const start = processStart(child.pid);
    await new Promise((resolve) => child.once("exit", resolve).kill("SIGKILL"));
    await lockAs({ pid: child.pid, start });
    const lockPath = `${file}.lock`;
    type Taken = { lock?: LogLock; err?: unknown };
    const acquire = (): Promise<Taken> =>
      acquireLogLock(file, { session: "s1" }).then(
        (lock) => ({ lock }),
        (err: unknown) => ({ err }),
      );
    // C reads the stale lock and stalls there; B takes it over meanwhile. Whatever C then does to the lock's
    // name, D tries right after it: a C that moved or deleted B's lock would let D in beside B.
    let release!: () => void;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    let [cRead, bHolds] = [false, false];
    let d: Promise<Taken> | undefined;
    const dRightAfter = async () => {
      if (!bHolds || d) return;
      d = acquire();
      await d;
    };
    const [readFile, rename, rm] = [fs.readFile, fs.rename, fs.rm];
    vi.spyOn(fs, "readFile").mockImplementation((async (...args: Parameters<typeof readFile>) => {
      const text = await readFile(...args);
      if (args[0] === lockPath && !cRead) {
        cRead = true;
        await stalled;
      }
      return text;
    }) as typeof readFile);
    vi.spyOn(fs, "rename").mockImplementation(async (from, to) => {
      await rename(from, to);
      if (from === lockPath) await dRightAfter();
    });
    vi.spyOn(fs, "rm").mockImplementation(async (target, options) => {
      await rm(target, options);
      if (target === lockPath) await dRightAfter();
    });
    const c = acquire();
    while (!cRead) await new Promise((resolve) => setImmediate(resolve));
    const b = await acquire();
    expect(b.lock).toBeDefined();
    bHolds = true;
    release();
    const results = [b, await c, ...(d ? [await d] : [])];
    expect(results.filter((r) => r.lock).length).toBe(1);
    for (const r of results) if (!r.lock) expect(r.err).toBeInstanceOf(LogLockedError);
    await b.lock!.release();
  });

  it("removes a takeover's breaker left by a taker that died in it", async () => {
    const child = await otherProcess();
    await new Promise((resolve) => child.once("exit", resolve).kill("SIGKILL"));
    await lockAs({ pid: child.pid });
    await fs.writeFile(`${file}.lock.break`, `${child.pid}\n`);
    const past = new Date(Date.now() - 60_000);
    await fs.utimes(`${file}.lock.break`, past, past);
    expect((await open()).lastSeq).toBe(0);
    expect(existsSync(`${file}.lock.break`)).toBe(false);
  });

  it("waits out a lock still being written, and takes over one left unreadable", async () => {
    await fs.writeFile(`${file}.lock`, "");
    await expect(open()).rejects.toThrow(/session s1 is being opened by another process: try again/);
    const past = new Date(Date.now() - 60_000);
    await fs.utimes(`${file}.lock`, past, past);
    expect((await open()).lastSeq).toBe(0);
  });

  it("lets readers read a locked log, and is gone once the writer closes", async () => {
    const log = await open();
    await log.append([delta("a"), delta("b")]);
    expect(existsSync(`${file}.lock`)).toBe(true);
    expect((await readEventsFile(file)).map((e) => e.seq)).toEqual([1, 2]);
    await log.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
    const again = await open();
    expect(again.lastSeq).toBe(2);
  });

  it("is released when opening the log fails", async () => {
    await fs.writeFile(file, "{oops\n{oops\n");
    await expect(open()).rejects.toThrow(/line 1: not valid JSON/);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("leaves alone a lock that another process took over", async () => {
    const log = await open();
    const child = await otherProcess();
    await lockAs({ pid: child.pid, start: processStart(child.pid) });
    await log.close();
    expect(JSON.parse(await fs.readFile(`${file}.lock`, "utf8"))).toMatchObject({ pid: child.pid });
  });
});

describe("removing a session", () => {
  it("is refused while another process has its log open", async () => {
    const { FsSessionStore } = await import("./session-store.js");
    const store = new FsSessionStore(dir);
    await store.create({ id: "s1", harness: "echo", config: {} });
    file = store.paths("s1").events;
    const child = await otherProcess();
    await lockAs({ pid: child.pid, start: processStart(child.pid) });
    await expect(store.remove("s1")).rejects.toThrow(/session s1 is open in another Brain process/);
    expect(existsSync(store.paths("s1").record)).toBe(true);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    await store.remove("s1");
    expect(existsSync(store.paths("s1").dir)).toBe(false);
    await store.remove("s1"); // a missing session is not an error
  });
});
