// A session over the fs store whose log writes fail (a full disk) or are held back (a slow disk): what the
// session guarantees when the disk is the slow or broken part.
import { afterEach, describe, expect, it } from "vitest";
import { echoFactory, events, makeBrain, type TestBrain, textOf } from "../testing/brain.js";
import type { HarnessFactory } from "./harness.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

type LogWrite = typeof import("../store/fs/index.js")["nodeLogIO"]["write"];

/** A Brain on the fs store whose log writes go through `write` (given the real one), with `factory`'s harness. */
async function brainOverDisk(
  write: (real: LogWrite, ...args: Parameters<LogWrite>) => ReturnType<LogWrite>,
  factory: HarnessFactory,
) {
  const { FsSessionStore, nodeLogIO } = await import("../store/fs/index.js");
  const { Brain } = await import("./brain.js");
  const { HarnessRegistry } = await import("./registry.js");
  const { ToolRouter } = await import("../tools/router.js");
  const { BuiltinTools } = await import("../tools/builtin.js");
  const io = { ...nodeLogIO, write: (...args: Parameters<LogWrite>) => write(nodeLogIO.write, ...args) };
  t = makeBrain();
  return new Brain({
    store: new FsSessionStore(t.home, io),
    harnesses: new HarnessRegistry([factory]),
    tools: new ToolRouter([new BuiltinTools()]),
  });
}

describe("a full disk", () => {
  it("fails the prompt with the disk's error, loses nothing already written, and works again after", async () => {
    let full = false;
    const brain = await brainOverDisk((write, ...args) => {
      if (full) {
        const err = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
        return Promise.reject(err);
      }
      return write(...args);
    }, echoFactory());
    try {
      const session = await brain.create({ harness: "echo" });
      await (await session.prompt("before")).settled;
      const before = await events(session);
      full = true;
      await expect(session.prompt("during")).rejects.toThrow(/ENOSPC/);
      full = false;
      expect((await events(session)).slice(0, before.length)).toEqual(before);
      const turn = await session.prompt("after");
      expect((await turn.settled).status).toBe("completed");
      const all = await events(session);
      // The refused prompt's seqs are not given again (a reader elsewhere may have read them): one gap, there.
      const after = all.slice(before.length).map((e) => e.seq);
      expect(after[0]).toBeGreaterThan(before.at(-1)!.seq + 1);
      expect(after).toEqual(after.map((_, i) => after[0]! + i));
    } finally {
      await brain.close();
    }
  });
});

describe("a new session's first prompt", () => {
  it("opens the harness while the prompt is made durable, and logs the prompt before anything the harness says", async () => {
    let held: Promise<void> | undefined;
    const echo = echoFactory();
    let opened: () => void = () => {};
    const opening = new Promise<void>((resolve) => {
      opened = resolve;
    });
    const factory: HarnessFactory = {
      name: "echo",
      supportsSteering: true,
      open: (options) => {
        opened();
        return echo.open(options);
      },
    };
    const brain = await brainOverDisk(async (write, ...args) => {
      await held;
      return write(...args);
    }, factory);
    try {
      const session = await brain.create({ harness: "echo" });
      let release: () => void = () => {};
      held = new Promise((resolve) => {
        release = resolve;
      });
      const started = session.prompt("hello");
      // The prompt's commit is held back: the harness is asked to open all the same.
      await opening;
      release();
      const turn = await started;
      expect((await turn.settled).status).toBe("completed");
      const all = await events(session);
      expect(all.slice(0, 3).map((e) => e.type)).toEqual(["session.opened", "user.prompt", "turn.started"]);
      expect(textOf(all)).toBe("echo #1: hello");
    } finally {
      await brain.close();
      await echo.close();
    }
  }, 30_000);
});
