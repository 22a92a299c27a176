// A child that arrives later: what its owner wrote, ended and signalled before it ran is applied once it runs,
// in order, to the real process.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { PendingChild } from "./pending-child.js";
import type { RunnerChild } from "./spawner.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

/** A start the test completes by hand: the child is spawned only when `release` is called. */
function later(command: string, args: string[]) {
  let release: () => ChildProcess = () => {
    throw new Error("not started");
  };
  const start = new Promise<RunnerChild>((resolve) => {
    release = () => {
      const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], detached: true });
      children.push(child);
      resolve(child);
      return child;
    };
  });
  return { start, release: () => release() };
}

/** A PendingChild that collects its child's stdout: `output()` is all of it once the child has closed. */
function collecting(group: boolean) {
  let out: Promise<string> = Promise.reject(new Error("never started"));
  out.catch(() => {});
  const pending = new PendingChild({
    group,
    onStart: (child) => {
      let text = "";
      child.stdout.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      out = new Promise((resolve) => child.on("close", () => resolve(text)));
    },
    onError: () => {},
  });
  return { pending, output: () => out };
}

describe("PendingChild", () => {
  it("writes what was written before the start, in order, then ends stdin", async () => {
    const { start, release } = later("cat", []);
    const { pending, output } = collecting(true);
    pending.start(start);
    pending.write("one ");
    pending.write(Buffer.from("two "));
    pending.end();
    pending.write("after the end");
    expect(pending.child).toBeUndefined();
    expect(pending.running).toBe(true);
    release();
    // cat exits only at EOF on stdin, so this resolves only because the held end was applied after the writes.
    expect(await start.then(output)).toBe("one two ");
    expect(pending.running).toBe(false);
  });

  it("signals the child's group once it is started, a held SIGKILL winning over a gentler signal", async () => {
    // The shell ignores SIGTERM, so only the SIGKILL ends it; its sleep (same group) goes with it.
    const { start, release } = later("sh", ["-c", "trap '' TERM; sleep 30 & wait"]);
    const pending = new PendingChild({ group: true, onStart: () => {}, onError: () => {} });
    pending.start(start);
    pending.signal("SIGTERM");
    pending.signal("SIGKILL");
    pending.signal("SIGTERM");
    const child = release();
    const [, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe("SIGKILL");
  });

  it("reports a start that failed, and holds nothing for it", async () => {
    const errors: string[] = [];
    const pending = new PendingChild({
      group: false,
      onStart: () => errors.push("started"),
      onError: (err) => errors.push(err.message),
    });
    pending.start(Promise.reject(new Error("spawn nope ENOENT")));
    pending.write("lost");
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual(["spawn nope ENOENT"]);
    expect(pending.child).toBeUndefined();
  });

  it("adopts a child that is already running at once, listeners before anything is applied", async () => {
    const child = spawn("cat", [], { stdio: ["pipe", "pipe", "pipe"] });
    children.push(child);
    const { pending, output } = collecting(false);
    pending.start(child);
    expect(pending.child).toBe(child);
    pending.write("now");
    pending.end();
    expect(await output()).toBe("now");
  });
});
