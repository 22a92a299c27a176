// The CLI's own errors and how any error reads: a module of its own, so the command table (main.ts) loads no
// config schema before it knows the command.

/** Wrong arguments: the CLI prints the message and the usage, and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A config file that is missing, not JSON or not valid: exits 2. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** One line a user can act on, for any error the CLI may meet. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" && !/^E[A-Z]+$/.test(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
