// What opening a session this host has just created skips, and what it still does: its record is not read back,
// its first harness open reads no log for a history check (there is none to hold), and every later open checks.
import { readdirSync, rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { FsSessionStore, nodeLogIO } from "../store/fs/index.js";
import type { JsonlEventLog as FsLog } from "../store/fs/jsonl-log.js";
import { echoFactory, tempDir } from "../testing/brain.js";
import { ToolRouter } from "../tools/router.js";
import { Brain } from "./brain.js";
import type { ExpectedHistory, Harness, HarnessFactory } from "./harness.js";
import { HarnessRegistry } from "./registry.js";

/** The echo runner, with every opened harness and every history check it was asked for kept. */
function recordingFactory() {
  const echo = echoFactory({ spares: 0 });
  const opened: Harness[] = [];
  const checks: ExpectedHistory[] = [];
  const factory: HarnessFactory = {
    name: "echo",
    supportsSteering: echo.supportsSteering,
    clientOptions: echo.clientOptions,
    async open(options) {
      const harness = await echo.open(options);
      opened.push(harness);
      harness.verify = async (expected) => {
        checks.push(expected);
        return undefined;
      };
      return harness;
    },
    close: () => echo.close(),
  } as HarnessFactory;
  return { factory, opened, checks };
}

/** The store, counting its record reads and the reads of every log it opens (patched in place). */
function countingStore(store: FsSessionStore) {
  const counts = { gets: 0, logReads: 0 };
  const get = store.get.bind(store);
  store.get = (id) => {
    counts.gets++;
    return get(id);
  };
  const counting = <L extends { read: FsLog["read"] }>(log: L): L => {
    const read = log.read.bind(log);
    log.read = (after, limit) => {
      counts.logReads++;
      return read(after, limit);
    };
    return log;
  };
  const openLog = store.openLog.bind(store);
  store.openLog = async (id) => counting(await openLog(id));
  const createOpen = store.createOpen.bind(store);
  store.createOpen = async (input) => {
    const made = await createOpen(input);
    return { ...made, log: counting(made.log) };
  };
  return { counted: store, counts };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A Brain on the echo runner over a counting store in a throwaway home. */
function countedBrain() {
  const home = tempDir();
  const recording = recordingFactory();
  const { counted, counts } = countingStore(new FsSessionStore(home));
  const brain = new Brain({
    store: counted,
    harnesses: new HarnessRegistry([recording.factory]),
    tools: new ToolRouter([]),
  });
  cleanups.push(async () => {
    await brain.close();
    rmSync(home, { recursive: true, force: true });
  });
  return { brain, counts, ...recording };
}

describe("a session this host has just created", () => {
  it("opens without reading its record back or its log, and checks the history at every later open", async () => {
    const { brain, counts, opened, checks } = countedBrain();
    const session = await brain.create({ harness: "echo" });
    expect(counts.gets).toBe(0);
    expect((await (await session.prompt("remember tangerine")).settled).status).toBe("completed");
    expect(counts.logReads).toBe(0);
    expect(checks).toEqual([]);

    // The runner goes away: the next prompt opens a fresh one, which must hold the answered turn.
    await opened[0]!.close();
    expect((await (await session.prompt("what was it?")).settled).status).toBe("completed");
    expect(opened).toHaveLength(2);
    expect(counts.logReads).toBeGreaterThan(0);
    expect(checks).toEqual([expect.objectContaining({ lastPrompt: "remember tangerine" })]);
  });

  it("is announced only once its first event is durable", async () => {
    const { brain } = countedBrain();
    const seen: number[] = [];
    brain.subscribe((change) => {
      if (change.type === "opened") seen.push(change.session.log.lastSeq);
    });
    const session = await brain.create({ harness: "echo" });
    expect(seen).toEqual([1]);
    expect((await session.log.read(0)).map((e) => e.type)).toEqual(["session.opened"]);
  });

  it("is not made, nor left behind, when its files cannot be made durable", async () => {
    const home = tempDir();
    const io = {
      ...nodeLogIO,
      syncDir: async () => {
        throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
      },
    };
    const store = new FsSessionStore(home, io);
    const brain = new Brain({
      store,
      harnesses: new HarnessRegistry([echoFactory({ spares: 0 })]),
      tools: new ToolRouter([]),
    });
    cleanups.push(async () => {
      await brain.close();
      rmSync(home, { recursive: true, force: true });
    });
    await expect(brain.create({ harness: "echo" })).rejects.toThrow(/cannot create .*EIO/);
    expect(brain.liveSessions()).toEqual([]);
    expect(await store.list()).toEqual([]);
    expect(readdirSync(store.root)).toEqual([]);
  });
});
