// Serving over stdin/stdout: the host nui and Brain start for an extension (`transport: stdio`).

import { claimStdout } from "../stdout-guard.js";
import type { NuiAgent } from "./agent.js";
import { RpcConnection } from "./rpc.js";
import { guarded } from "./run.js";

export function serveStream(
  agent: NuiAgent,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Promise<void> {
  // On process.stdout, the protocol's lines are the only writes that reach it (stdout-guard.ts says what else can).
  const write =
    output === process.stdout ? claimStdout() : (line: string, done?: () => void) => output.write(line, done);
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      connection.end();
      resolve();
    };
    const connection = new RpcConnection(
      agent,
      (line) => write(line),
      () => {
        finish();
        // The host's job is over: leave once stdout has drained.
        if (output === process.stdout) write("", () => process.exit(0));
      },
    );
    // Bytes, not text: the reader decodes each whole line, so a character two chunks share stays whole.
    const onData = (chunk: string | Buffer) => {
      if (connection.feed(chunk)) return;
      // A line over the cap: the rest of the stream is not read, and the host ends as at the end of its input.
      input.removeListener("data", onData);
      input.pause();
      stop();
    };
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      void guarded(agent, "onShutdown", () => agent.onShutdown()).then(finish);
    };
    input.on("data", onData);
    input.on("end", stop);
  });
}
