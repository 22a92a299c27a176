// A runner's stdout carries frames only: console output, which libraries write freely, goes to the log instead.
import { format, type InspectOptions, inspect } from "node:util";

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
