// What a run failed with, as its error event says it, and what a hook failed with, as stderr says it. Whatever was
// thrown: an Error, a string, undefined (a bare `reject()`), an object whose inspection or message throws. Reading
// it must never throw in turn: the run still has its done and its reply to send, or the caller waits for good.
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { inspect } from "node:util";

/**
 * The SDK's own files and the protocol code it shares with Brain (src/protocol, beside sdk/ in dist too): their frames
 * in a run's stack are the SDK at work, no help to the agent's author.
 */
const SDK_DIR = dirname(fileURLToPath(import.meta.url));
const SDK_DIRS = [SDK_DIR, join(SDK_DIR, "../../../src/protocol")].flatMap((dir) => [
  `${dir}/`,
  `${pathToFileURL(dir).href}/`,
]);
/** A person reads the failed turn's error, not the host's stderr: the frames nearest the throw say where. */
export const FAILURE_FRAMES = 3;

/**
 * An Error as its stack begins ("TypeError: x is not a function", where its message alone said less) followed by
 * the first FAILURE_FRAMES frames of the agent's own code (the SDK's and Node's internals left out); anything else
 * thrown as `run() failed with <what>`.
 */
export function failure(err: unknown, what = "run()"): string {
  try {
    if (err instanceof Error) return describeError(err);
    if (typeof err === "string" && err) return err;
    return `${what} failed with ${inspect(err, { breakLength: Number.POSITIVE_INFINITY })}`;
  } catch {
    return `${what} failed with ${unreadable(err)}`;
  }
}

function describeError(err: Error): string {
  const name = readable(() => err.name) || "Error";
  const message = readable(() => err.message);
  const summary =
    message === undefined
      ? `${name}: <its message could not be read>`
      : message
        ? `${name}: ${message}`
        : name;
  const stack = readable(() => err.stack) ?? "";
  const frames = stack
    .split("\n")
    .filter((line) => /^\s+at /.test(line))
    .filter((line) => !SDK_DIRS.some((dir) => line.includes(dir)))
    .filter((line) => !/[( ]node:/.test(line))
    .slice(0, FAILURE_FRAMES);
  if (frames.length === 0) return summary;
  return `${summary}\n${frames.map((line) => `    ${line.trim()}`).join("\n")}`;
}

/** A string property's value, or undefined when reading it throws or gives no string. */
function readable(read: () => unknown): string | undefined {
  try {
    const value = read();
    return typeof value === "string" ? value : value === undefined ? "" : String(value);
  } catch {
    return undefined;
  }
}

/** What can still be said of a value whose inspection threw: its type, and its constructor's name when readable. */
function unreadable(err: unknown): string {
  try {
    const ctor = (err as { constructor?: { name?: unknown } })?.constructor?.name;
    if (typeof ctor === "string" && ctor) return `a thrown ${ctor} that could not be read`;
  } catch {
    // a Proxy whose traps throw: its type is all there is
  }
  return `a value of type ${typeof err} that could not be read`;
}
