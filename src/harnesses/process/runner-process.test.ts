// How frames leave for the runner: the answers to tool calls that one commit let through, written in the same
// tick, share one writev(2); the answer to the only open call is written at once.
import type { Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { BrainToRunnerFrame } from "../../protocol/runner.js";
import { RunnerProcess } from "./runner-process.js";

let runner: RunnerProcess | undefined;
afterEach(async () => {
  await runner?.destroy();
  runner = undefined;
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

const answer = (id: string): BrainToRunnerFrame => ({
  attachment: "a",
  turn: "t",
  id,
  result: { content: [{ type: "text", text: id }], is_error: false },
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
