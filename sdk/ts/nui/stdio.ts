// Serving over stdin/stdout: the host nui and Brain start for an extension (`transport: stdio`).
import type { NuiAgent } from "./agent.js";
import { RpcConnection } from "./rpc.js";
import { guarded } from "./run.js";

export function serveStream(
  agent: NuiAgent,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Promise<void> {
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
      (line) => output.write(line),
      () => {
        finish();
        // The host's job is over: leave once stdout has drained.
        if (output === process.stdout) output.write("", () => process.exit(0));
      },
    );
    input.setEncoding?.("utf8");
    input.on("data", (chunk: string | Buffer) => connection.feed(chunk.toString()));
    input.on("end", () => {
      void guarded(agent, "onShutdown", () => agent.onShutdown()).then(finish);
    });
  });
}
