// A reader of stdout that goes away (`brain run … | head -1`) makes the next write fail with EPIPE, an 'error'
// event on process.stdout. bin/brain.js says so and exits 141 whatever the command; a command with something
// under way (a turn, a stream it follows) stops it here, so the log says how its turn ended.

/** Calls `then` when stdout's reader is gone; returns what stops watching. */
export function onStdoutClosed(then: () => void): () => void {
  const listener = (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") then();
  };
  process.stdout.on("error", listener);
  return () => process.stdout.off("error", listener);
}
