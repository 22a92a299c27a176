// A wait on a writer's answer over a real TCP connection (an extension host's, opencode's event stream): what the
// writer sent before the wait began is held by the sockets, and Brain may read it slower than the wait's `ms` (a
// loaded machine). The answer comes after it; reading it is not the writer's silence.
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ReadGate, ranOut, type WaitEnd } from "./read-gate.js";

/** The wait: reading what was held (PAUSES × STALL_MS at the least) outlasts it; its READ_LIMIT times do not. */
const MS = 300;
/** How long the slow reader stops after each chunk: well within MS, so the writer is heard. */
const STALL_MS = 60;
/** A socket's chunks are 64 KiB at most (Node's read buffer). */
const MAX_CHUNK = 64 * 1024;
/** Held at the wait's start: read in PAUSES chunks at the least: 480 ms. */
const PAUSES = 8;
const HELD = PAUSES * MAX_CHUNK;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A connection: `writer` is the host's end, `reader` Brain's, not read until `read` starts it. */
async function connection(): Promise<{ writer: Socket; reader: Socket }> {
  const server: Server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  const accepted = once(server, "connection") as Promise<[Socket]>;
  const reader = connect({ host: "127.0.0.1", port });
  reader.pause();
  const [writer] = await accepted;
  cleanups.push(() => {
    writer.destroy();
    reader.destroy();
    server.close();
  });
  return { writer, reader };
}

/**
 * Reads `reader` through `gate` slowly: STALL_MS after each chunk (not a gate's pause: a reader that takes that
 * long). `onText` gets all read so far.
 */
function readSlowly(reader: Socket, gate: ReadGate, onText: (text: string) => void): void {
  let text = "";
  reader.on("data", (chunk: Buffer) => {
    gate.read();
    text += chunk.toString();
    onText(text);
    reader.pause();
    setTimeout(() => reader.resume(), STALL_MS).unref();
  });
  reader.resume();
}

describe("a read-gated wait on a writer's answer over TCP", () => {
  it("goes on while Brain reads what the writer sent before it: the answer behind that is read", async () => {
    const { writer, reader } = await connection();
    const gate = new ReadGate(() => reader);
    writer.write(`${"x".repeat(HELD)}answer\n`);
    const outcome = await new Promise<string>((resolve) => {
      const stop = gate.afterRead(MS, () => resolve("gave up"));
      readSlowly(reader, gate, (text) => {
        if (!text.endsWith("answer\n")) return;
        stop();
        resolve(`answered after ${text.length - "answer\n".length} bytes`);
      });
    });
    expect(outcome).toBe(`answered after ${HELD} bytes`);
  });

  it("gives up on a writer silent for its time once what it sent before was read", async () => {
    const { writer, reader } = await connection();
    const gate = new ReadGate(() => reader);
    writer.write("x".repeat(HELD));
    let read = 0;
    const ended = await new Promise<{ read: number; end: WaitEnd }>((resolve) => {
      gate.afterRead(MS, (end) => resolve({ read, end }));
      readSlowly(reader, gate, (text) => {
        read = text.length;
      });
    });
    expect(ended).toEqual({ read: HELD, end: "silent" });
    expect(`did not answer${ranOut(ended.end, MS, "grace")}`).toBe(`did not answer within ${MS} ms`);
  });

  it("does not give up on a writer for Brain's own stall: what came in meanwhile is read first", async () => {
    const { writer, reader } = await connection();
    const gate = new ReadGate(() => reader);
    const outcome = await new Promise<string>((resolve) => {
      const stop = gate.afterRead(MS, () => resolve("gave up"));
      reader.on("data", () => {
        gate.read();
        stop();
        resolve("answered");
      });
      reader.resume();
      // From the check phase, so that the loop next runs its timers (the wait's ran out in the stall), then reads.
      setImmediate(() => {
        writer.write("answer\n");
        // Brain's thread stops (a loaded machine): the answer waits in the socket.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2 * MS);
      });
    });
    expect(outcome).toBe("answered");
  });

  it("gives up on a writer that never falls silent", async () => {
    const { writer, reader } = await connection();
    const gate = new ReadGate(() => reader);
    const writing = setInterval(() => writer.write("x"), MS / 10);
    cleanups.push(() => clearInterval(writing));
    reader.on("data", () => gate.read());
    reader.resume();
    // Heard from throughout: no silence ends the wait, the limit does (without one, this waits for good).
    const end = await new Promise<WaitEnd>((resolve) => gate.afterRead(MS, resolve));
    expect(end).toBe("still-writing");
    // Said as what ended it: the limit of reading, not the wait's own ms (which it outlasted five times).
    expect(`did not answer${ranOut(end, MS, "grace")}`).toBe(
      `did not answer: still writing after ${5 * MS} ms of reading (5 x the ${MS} ms grace)`,
    );
    expect(ranOut(end, MS, "timeout", "s")).toBe(
      ": still writing after 1.5 s of reading (5 x the 0.3 s timeout)",
    );
  });
});
