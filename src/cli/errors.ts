/** One line a user can act on, for any error the CLI may meet. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" && !/^E[A-Z]+$/.test(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
