// Argument parsing shared by the commands: node:util parseArgs, strict, with --config on every command.
import { parseArgs } from "node:util";
import type { Brain } from "../core/brain.js";
import { loadConfig } from "./config.js";
import { UsageError } from "./errors.js";

export { UsageError };

type Options = NonNullable<Parameters<typeof parseArgs>[0]>["options"];

export function parse(
  args: string[],
  options: Options = {},
): { values: Record<string, unknown>; positionals: string[] } {
  try {
    return parseArgs({
      args,
      options: { config: { type: "string" }, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Refuses words past the `count` a command reads: left unread, `brain sessions rm A B` deleted A, said nothing of
 * B and exited 0, and `brain serve 8080` served on the default port. `takes` says what the command does take.
 */
export function refuseExtra(positionals: string[], count: number, takes: string): void {
  const extra = positionals[count];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}": ${takes}`);
}

export function need<T>(value: T | undefined, message: string): T {
  if (value === undefined || value === "") throw new UsageError(message);
  return value;
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function strs(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** Runs `body` with a Brain built from --config, and closes it after. */
export async function withBrain<T>(
  values: Record<string, unknown>,
  body: (brain: Brain) => Promise<T>,
): Promise<T> {
  // Loaded here, not at the top: every command parses its arguments with this module, few build a Brain.
  const { createBrain } = await import("./setup.js");
  const brain = createBrain(loadConfig(str(values.config)));
  try {
    return await body(brain);
  } finally {
    await closeCommandBrain(brain);
  }
}

/**
 * Ends a command's Brain: each session it opened is closed and recorded closed, as a close through the daemon
 * does. brain.close() alone logs session.closed but leaves the record "open" (a daemon's shutdown keeps it so), and
 * `sessions ls`, the daemon's view and `brain attach` said open for a session no process held. One that cannot be
 * recorded closed is said, and brain.close() still closes it.
 */
export async function closeCommandBrain(brain: Brain): Promise<void> {
  for (const { session } of brain.liveSessions()) {
    await brain.closeSession(session.id).catch((err: Error) => {
      process.stderr.write(`brain: session ${session.id} could not be recorded closed: ${err.message}\n`);
    });
  }
  await brain.close();
}

/** A flag's value as a whole number 0 or more; anything else is the caller's mistake, said with what it takes. */
export function wholeNumber(flag: string, value: string, takes: string): number {
  // Number() alone would take "", " 7", "1e3" and "0x10".
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n))
    throw new UsageError(`${flag} takes ${takes} (a whole number, 0 or more), not "${value}"`);
  return n;
}
