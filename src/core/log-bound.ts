// How many bytes one session's log may hold. Every prompt and steer goes into the log whole (up to 4 MiB each),
// and nothing else bounds how many a session takes: one tenant's client could prompt a session until the disk
// was full, and then every tenant's appends on this host would fail. Past the bound the session takes no more of
// its clients' text (a 429 naming the bound and what to do); what it already logged stays, and a running turn
// still ends in the log. The bytes are the store's own count (the log's files, or its messages in the cluster's
// stream), so a restart does not reset it.
// The daemon checks inside a command's idempotency check: a retried prompt already in the log is answered as it
// was, never refused for the size it added.

import { SessionError } from "./errors.js";

export class SessionLogBound {
  /** `bytes`: what the store holds of a session's log (undefined for a store that cannot tell). `max` absent: no bound. */
  constructor(
    private readonly bytes: (id: string) => Promise<number | undefined>,
    private readonly max?: number,
  ) {}

  /** Runs `grow` (which adds a client's text to session `id`'s log) once the log is under its bound, or refuses it. */
  async admit<T>(id: string, grow: () => Promise<T>): Promise<T> {
    const max = this.max;
    if (max !== undefined) {
      const held = await this.bytes(id);
      if (held !== undefined && held >= max) {
        throw new SessionError(
          "limit_reached",
          `session ${id}'s log holds ${held} bytes on this host, its limit (${max}): it takes no more prompts; fork it or hand it off to go on in a new session, or raise limits.log_bytes_per_session in brain.config.json`,
        );
      }
    }
    return grow();
  }
}
