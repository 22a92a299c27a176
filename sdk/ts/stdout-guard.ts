// A host's stdout carries protocol lines only. The agent's own writes to it, process.stdout.write() and every console
// method (console.log, dir, table, count: they all write through process.stdout.write), go to stderr instead: one
// without its newline ran into the next protocol line, which Brain then dropped as not JSON (an event lost).
//
// What this cannot reach: a child process started with stdio "inherit" (or fd 1 passed on), and native code, write
// to file descriptor 1 itself. Python's SDK moves the protocol to a dup of fd 1 and points fd 1 at stderr; Node has no
// dup()/dup2() without native code, and the one way around it, opening /dev/fd/1 anew, fails with ENXIO on the
// socket a Node parent (Brain, nui) gives as a child's stdout. Children started with stdio "pipe" (the default of
// spawn, exec and execFile) are not affected.

type Done = (err?: Error | null) => void;
/** Writes a protocol line to the real stdout; `done` is called once it is flushed (or failed). */
export type ProtocolWrite = (chunk: string, done?: Done) => boolean;

let claimed: ProtocolWrite | undefined;

/** Points process.stdout.write at stderr and returns the one writer of the real stdout. Idempotent. */
export function claimStdout(): ProtocolWrite {
  if (claimed) return claimed;
  const stdout = process.stdout;
  const original = stdout.write;
  const protocol: ProtocolWrite = (chunk, done) => original.call(stdout, chunk, "utf8", done);
  stdout.write = ((chunk: string | Uint8Array, encoding?: BufferEncoding | Done, done?: Done) =>
    typeof encoding === "function"
      ? process.stderr.write(chunk, encoding)
      : process.stderr.write(chunk, encoding, done)) as typeof stdout.write;
  claimed = protocol;
  return protocol;
}
