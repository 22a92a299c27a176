// A runner's stdout carries frames only: console output, which libraries write freely, goes to the log instead.
import { format, type InspectOptions, inspect } from "node:util";
import { claimStdout } from "./stdout-guard.js";

/** Points console.log and friends at the log: a stray line on stdout would break the protocol. */
export function guardConsole(log: (message: string) => void): void {
  const toLog = (...args: unknown[]) => log(format(...args));
  console.log = toLog;
  console.info = toLog;
  console.debug = toLog;
  // dir and dirxml write to the console's stream themselves, not through console.log.
  console.dir = (item: unknown, options?: InspectOptions) => log(inspect(item, options));
  console.dirxml = toLog;
}

/** process.stdout as only the frames write it: anything else's process.stdout.write goes to stderr (stdout-guard.ts). */
export function protocolStdout() {
  const write = claimStdout();
  return {
    write: (chunk: string) => write(chunk),
    once: (event: "drain" | "close", listener: () => void) => process.stdout.once(event, listener),
    off: (event: "drain" | "close", listener: () => void) => process.stdout.off(event, listener),
  };
}
