// Drives the runner SDK in-process, as Brain would over stdio: frames in through a stream, frames out collected
// and decoded strictly with Brain's own decoder, so every frame the SDK writes is checked against the protocol.
import { PassThrough } from "node:stream";
import { type Runner, type RunnerHost, serve } from "../../sdk/ts/index.js";
import { decodeRunnerFrame } from "../../src/protocol/frames.js";
import { encodeLine } from "../../src/protocol/ndjson.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read decoded frames field by field
export type Frame = Record<string, any>;

export interface SdkHarness {
  frames: Frame[];
  logs: string[];
  exitCode: () => number | undefined;
  send(frame: unknown): void;
  /** Writes raw bytes (partial lines, garbage). */
  write(bytes: string | Buffer): void;
  end(): void;
  /** Breaks the input stream, as a failed read of stdin would. */
  fail(err: Error): void;
  /** Resolves with the first frame (already written or still to come) that matches. */
  next(match: (frame: Frame) => boolean): Promise<Frame>;
  closed: Promise<void>;
  host: RunnerHost;
}

export function runSdk(runner: Runner): SdkHarness {
  const input = new PassThrough();
  const frames: Frame[] = [];
  const logs: string[] = [];
  const waiters: { match: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];
  let exitCode: number | undefined;
  let pending = "";
  const output = {
    write(chunk: string) {
      pending += chunk;
      for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        const frame = decodeRunnerFrame(line) as Frame;
        frames.push(frame);
        for (const w of waiters.filter((w) => w.match(frame))) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(frame);
        }
      }
      return true;
    },
  };
  const host = serve(runner, {
    input,
    output,
    log: (message) => logs.push(message),
    exit: (code) => {
      exitCode = code;
    },
    guardStdout: false,
  });
  return {
    frames,
    logs,
    exitCode: () => exitCode,
    send: (frame) => input.write(encodeLine(frame)),
    write: (bytes) => input.write(bytes),
    end: () => input.end(),
    fail: (err) => input.destroy(err),
    next(match) {
      const hit = frames.find(match);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    closed: host.closed,
    host,
  };
}

export const OPEN_PARAMS = {
  session_id: "s1",
  dir: "/nonexistent/native",
  config: {},
  tools: [{ name: "echo", input_schema: { type: "object" } }],
  provider: {},
};

export const reply = (id: string) => (f: Frame) => f.id === id && ("result" in f || "error" in f);
