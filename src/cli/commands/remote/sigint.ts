// Ctrl-C while following a session: the first interrupts the running turn (on the daemon), the next one (or the
// first, when no turn runs) detaches, leaving the session as it is.
import { randomUUID } from "node:crypto";
import type { BrainClient } from "../../../client/client.js";
import { terminalText } from "../../output.js";
import type { RemoteTail } from "./tail.js";

export function onCtrlC(client: BrainClient, id: string, tail: RemoteTail): () => void {
  let interrupted = false;
  const handler = () => {
    if (!interrupted && tail.runningTurn) {
      interrupted = true;
      process.stderr.write("\n[interrupting the turn; press Ctrl-C again to detach]\n");
      client
        .interrupt(id, { key: randomUUID() }) // asked again, safely, after a daemon restart
        .catch((err: Error) =>
          process.stderr.write(`${terminalText(`[could not interrupt: ${err.message}]`)}\n`),
        );
      return;
    }
    process.stderr.write(`\n[detached; the session goes on: brain attach ${id}]\n`);
    tail.detach();
  };
  process.on("SIGINT", handler);
  return () => process.off("SIGINT", handler);
}
