// How many bytes one session may hold: its log and its checkpoints. Every prompt and steer goes into the log whole
// (up to 4 MiB each), and every checkpoint stores a manifest and what its native files gained since the last: one
// tenant's client could prompt or checkpoint a session until the disk was full, and then every tenant's appends on
// this host would fail. Past the bound the session takes no more of its clients' text and no more checkpoints (a
// 429 naming the bound and what to do); what it already holds stays, and a running turn still ends in the log. A
// session with no checkpoint may always take one, so that it can be forked. The bytes are the store's own count
// (the log's files or its messages in the cluster's stream; the checkpoints' manifests and blobs, ./checkpoint-bytes.ts),
// so a restart does not reset it.
// The daemon checks inside a command's idempotency check: a retried prompt already in the log is answered as it
// was, never refused for the size it added.

import { SessionError } from "./errors.js";

/** What a session holds in the store: its log's and its checkpoints' bytes together, and how many checkpoints. */
export interface HeldBytes {
  bytes: number;
  checkpoints: number;
}

export class SessionLogBound {
  /** `held`: what the store holds of a session (undefined for a store that cannot tell). `max` absent: no bound. */
  constructor(
    private readonly held: (id: string) => Promise<HeldBytes | undefined>,
    private readonly max?: number,
  ) {}

  /** Runs `grow` (which adds a client's text to session `id`'s log) once the session is under its bound, or refuses it. */
  async admit<T>(id: string, grow: () => Promise<T>): Promise<T> {
    const over = await this.over(id);
    if (over) {
      throw new SessionError(
        "limit_reached",
        `${over.said}: it takes no more prompts; fork it or hand it off to go on in a new session, or raise limits.log_bytes_per_session in brain.config.json`,
      );
    }
    return grow();
  }

  /** Runs `make` (a checkpoint of session `id`) unless the session is at its bound and has a checkpoint already. */
  async admitCheckpoint<T>(id: string, make: () => Promise<T>): Promise<T> {
    const over = await this.over(id);
    if (over && over.held.checkpoints > 0) {
      throw new SessionError(
        "limit_reached",
        `${over.said}: it takes no more checkpoints; go on from its latest checkpoint in a new session (POST /v1/sessions/${id}/fork) or write it out (POST /v1/sessions/${id}/restore), or raise limits.log_bytes_per_session in brain.config.json (checkpoints cannot be deleted through the API)`,
      );
    }
    return make();
  }

  private async over(id: string): Promise<{ held: HeldBytes; said: string } | undefined> {
    const max = this.max;
    if (max === undefined) return undefined;
    const held = await this.held(id);
    if (held === undefined || held.bytes < max) return undefined;
    const said = `session ${id}'s log and ${held.checkpoints} checkpoints hold ${held.bytes} bytes on this host, its limit (${max})`;
    return { held, said };
  }
}
