// The runner SDK when Brain reads its stdout slower than the runner writes: a handler that awaits its deltas
// stops at the output's buffer, instead of queueing everything it produces in the runner's memory.
import { PassThrough, Writable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { serve } from "../../sdk/ts/index.js";
import { encodeLine } from "../../src/protocol/ndjson.js";
import { OPEN_PARAMS } from "./harness.js";

const DELTAS = 1000;
const DELTA = "x".repeat(1000);

/** A stdout whose reader is stalled until `release()`: each write waits for it, as a full pipe does. */
function stalledOutput() {
  const lines: string[] = [];
  let released = false;
  const held: (() => void)[] = [];
  const output = new Writable({
    highWaterMark: 16 * 1024,
    decodeStrings: false,
    write(chunk: string, _encoding, done) {
      lines.push(chunk);
      if (released) done();
      else held.push(done);
    },
  });
  const release = () => {
    released = true;
    for (const done of held.splice(0)) done();
  };
  return { output, lines, release };
}

describe("runner SDK: backpressure", () => {
  it("holds a handler that awaits its deltas at the output's buffer until Brain reads again", async () => {
    const { output, lines, release } = stalledOutput();
    const input = new PassThrough();
    let produced = 0;
    let started: () => void = () => {};
    const producing = new Promise<void>((resolve) => {
      started = resolve;
    });
    serve(
      {
        open: () => ({
          async prompt(_text, turn) {
            started();
            for (; produced < DELTAS; produced++) await turn.delta(DELTA);
          },
          checkpoint: () => [],
        }),
      },
      { input, output, log: () => {}, exit: () => {}, guardStdout: false },
    );
    input.write(encodeLine({ attachment: "A", id: "o1", method: "open", params: OPEN_PARAMS }));
    input.write(
      encodeLine({ attachment: "A", turn: "T1", id: "p1", method: "prompt", params: { text: "go" } }),
    );
    await producing;
    // Turns of the event loop: a handler not held back would have queued all its deltas in the first one.
    for (let i = 0; i < 20; i++) await nextTurn();
    // The buffer's 16 KiB hold about sixteen 1 KB deltas; the rest wait in the handler, not in memory.
    expect(produced).toBeLessThan(50);
    expect(output.writableLength).toBeLessThan(64 * 1024);

    release();
    while (!lines.some((line) => line.includes('"id":"p1"'))) await nextTurn();
    expect(produced).toBe(DELTAS);
    expect(lines.filter((line) => line.includes("assistant.delta"))).toHaveLength(DELTAS);
  });
});
