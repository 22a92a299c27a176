// A thrown error as it will be printed (`brain serve` logs a 5xx with util.inspect): its message, its stack, its
// cause chain, an AggregateError's members and its other fields. Redacting only the message left the rest: a
// stack read before the message was redacted keeps the message as it was then, and causes and members are
// printed whole.

/**
 * Redacts, in place, every string a printed `err` shows; returns `err` (a string or other value: its redacted
 * copy). Errors are changed rather than copied: the one thrown is the one the daemon's error handler logs.
 */
export function redactError(err: unknown, redact: (text: string) => string): unknown {
  return redactThrown(err, redact, new Set());
}

function redactThrown(value: unknown, redact: (text: string) => string, seen: Set<unknown>): unknown {
  if (typeof value === "string") return redact(value);
  if (value === null || typeof value !== "object" || seen.has(value)) return value;
  seen.add(value);
  if (!(value instanceof Error)) {
    if (Array.isArray(value)) return value.map((item) => redactThrown(item, redact, seen));
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, redactThrown(item, redact, seen)]),
    );
  }
  const err = value as Error & { errors?: unknown };
  // The message first: a stack not read yet is formatted from it when read below.
  err.message = redact(err.message);
  if (typeof err.stack === "string") err.stack = redact(err.stack);
  // `cause` and `errors` are own but not enumerable; any other field (a child's stderr tail, say) is enumerable.
  for (const key of new Set(["cause", "errors", ...Object.keys(err)])) {
    if (!Object.hasOwn(err, key)) continue;
    const next = redactThrown((err as unknown as Record<string, unknown>)[key], redact, seen);
    try {
      (err as unknown as Record<string, unknown>)[key] = next;
    } catch {
      // A read-only field is printed as it is: nothing here can change it.
    }
  }
  return err;
}
