// How frames leave for the runner: the answers to tool calls that one commit let through, written in the same
// tick, share one writev(2); the answer to the only open call is written at once.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_FRAME } from "../../protocol/ndjson.js";
import type { BrainToRunnerFrame } from "../../protocol/runner.js";
import { alive, until } from "../../testing/processes.js";
import { RunnerProcess } from "./runner-process.js";
import type { RunnerChild } from "./spawner.js";
import { spawnRunner } from "./started-runner.js";

let runner: RunnerProcess | undefined;
/** Processes a test's runner left behind and temp dirs, removed here should the test fail before they go. */
const helpers: number[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await runner?.destroy();
  runner = undefined;
  for (const pid of helpers.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A runner that reads its stdin and answers nothing: only Brain's side of the pipe is looked at. */
function sink(): { runner: RunnerProcess; stdin: Writable } {
  runner = new RunnerProcess({
    name: "sink",
    command: process.execPath,
    args: ["-e", "process.stdin.resume()"],
  });
  return { runner, stdin: (runner as unknown as { child: { stdin: Writable } }).child.stdin };
}

const answer = (id: string, text = id): BrainToRunnerFrame => ({
  attachment: "a",
  turn: "t",
  id,
  result: { content: [{ type: "text", text }], is_error: false },
});

describe("answers to tool calls", () => {
  it("leave in one write when several calls are open, in order", async () => {
    const { runner, stdin } = sink();
    const writev = vi.spyOn(stdin as unknown as { _writev: () => void }, "_writev");
    const write = vi.spyOn(stdin as unknown as { _write: () => void }, "_write");
    runner.openCalls = 3;
    for (const id of ["c1", "c2", "c3"]) runner.send(answer(id));
    expect(write).not.toHaveBeenCalled(); // held until the tick ends
    await new Promise((resolve) => setImmediate(resolve));
    expect(write).not.toHaveBeenCalled();
    expect(writev).toHaveBeenCalledTimes(1);
    // Node hands _writev the buffers themselves when all are buffers, else {chunk} entries.
    const chunks = (writev.mock.calls[0] as unknown as [(Buffer | { chunk: Buffer })[]])[0];
    const ids = chunks.map((c) => JSON.parse(String(Buffer.isBuffer(c) ? c : c.chunk)).id as string);
    expect(ids).toEqual(["c1", "c2", "c3"]);
  });

  it("leaves at once when it answers the only open call", () => {
    const { runner, stdin } = sink();
    const write = vi.spyOn(stdin as unknown as { _write: () => void }, "_write");
    runner.openCalls = 1;
    runner.send(answer("c1"));
    expect(write).toHaveBeenCalledTimes(1);
  });
});

describe("what a runner has not read yet", () => {
  it("may be the answers to 32 calls at once, each near the frame cap: a runner reading them as they come goes on", async () => {
    // Counts the lines it reads; at the 32nd it says so with a delta.
    const script = `let n = 0;
process.stdin.on("data", (c) => {
  for (const b of c) if (b === 10 && ++n === 32)
    process.stdout.write(JSON.stringify({ attachment: "a", turn: "t", event: "assistant.delta", data: { text: "32" } }) + "\\n");
});`;
    runner = new RunnerProcess({ name: "reader", command: process.execPath, args: ["-e", script] });
    const fatal: string[] = [];
    const read = new Promise<void>((resolve) =>
      runner!.attach("a", {
        onFrame: () => resolve(),
        onDelta: () => resolve(),
        onWarning: () => {},
        runningTurn: () => undefined,
        onFatal: (message) => {
          fatal.push(message);
          resolve();
        },
      }),
    );
    const text = "r".repeat(MAX_FRAME - 1024);
    for (let i = 0; i < 32; i++) runner.send(answer(`c${i}`, text));
    await read;
    expect(fatal).toEqual([]);
    expect(runner.alive).toBe(true);
  });
});

describe("stop", () => {
  it("ends what the runner left in its group, when the runner itself exits at its stdin's end", async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-runner-group-"));
    dirs.push(dir);
    const pidFile = join(dir, "helper.pid");
    // A tool's background process with its output elsewhere (so it holds none of the runner's pipes); the
    // runner then ends at EOF, before any signal would reach its group.
    runner = new RunnerProcess({
      name: "leaves-a-child",
      command: "sh",
      args: [
        "-c",
        'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$0.tmp" && mv "$0.tmp" "$0"; exec cat',
        pidFile,
      ],
    });
    let helper = 0;
    await until(() => {
      try {
        helper = Number(readFileSync(pidFile, "utf8"));
      } catch {}
      return helper > 0;
    });
    helpers.push(helper);
    expect(alive(helper)).toBe(true);
    await runner.stop();
    await until(() => !alive(helper));
  });

  it("ends a runner stopped while it was still being started, even one that ignores SIGTERM", async () => {
    let handOver: (child: RunnerChild) => void = () => {};
    const starting = new Promise<RunnerChild>((resolve) => {
      handOver = resolve;
    });
    runner = new RunnerProcess({ name: "late", command: "sh", args: [] }, starting);
    const stopped = runner.stop(100);
    handOver(spawnRunner({ command: "sh", args: ["-c", "trap '' TERM; while :; do sleep 1; done"] }));
    // Without the fix this waits for good: the test's timeout, not an assertion, catches it.
    await stopped;
    expect(runner.alive).toBe(false);
  });
});
