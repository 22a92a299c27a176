// Where a session's log ended, kept beside its record in the records bucket. The events stream's limits (an
// operator's max_age, max_bytes, max_msgs) can let go of every message of a session, and then the log alone
// cannot say where its seqs stopped: a reopen started them again at 1, and a watcher holding a cursor past them
// took the new events for ones it had seen (Last-Event-ID replays nothing) while seqs meant two events each.
import type { KV, KvEntry } from "@nats-io/kv";
import { errorMessage, natsFailure } from "./errors.js";
import { createOn, updateOn } from "./kv-update.js";

/** The mark's key: not a session id (those have no '.'), so lists of the bucket pass it by. */
export function markKey(session: string): string {
  return `${session}.end`;
}

/**
 * The last seq the session's log reserved, past any it used (0 when none is marked). `incarnation` is the record's: a
 * session deleted and made again with the same id does not go on from its predecessor's seqs.
 */
export async function readMark(records: KV, session: string, incarnation: string): Promise<number> {
  const entry = await records.get(markKey(session)).catch((err: unknown) => {
    throw natsFailure(failure(session, "read"), err);
  });
  return markOf(entry, incarnation);
}

function markOf(entry: KvEntry | null, incarnation: string): number {
  if (entry?.operation !== "PUT") return 0;
  try {
    const mark = entry.json<{ incarnation?: unknown; seq?: unknown }>();
    return mark.incarnation === incarnation && Number.isSafeInteger(mark.seq) ? (mark.seq as number) : 0;
  } catch {
    return 0;
  }
}

/**
 * Reserves the seqs up to `seq` (the log's writer, before any event of its takes one of them), unless more are
 * reserved already: a stale writer's reservation, landing after its successor's, must not lower it. Returns the
 * reservation the key holds.
 */
export async function writeMark(
  records: KV,
  session: string,
  incarnation: string,
  seq: number,
): Promise<number> {
  const key = markKey(session);
  try {
    for (let tries = 1; ; tries++) {
      const entry = await records.get(key);
      const held = markOf(entry, incarnation);
      if (held >= seq) return held;
      const value = JSON.stringify({ incarnation, seq });
      try {
        if (entry) await updateOn(records, key, value, entry.revision);
        else await createOn(records, key, value);
        return seq;
      } catch (err) {
        if (tries >= 10 || !/wrong last sequence/i.test(errorMessage(err))) throw err;
      }
    }
  } catch (err) {
    throw natsFailure(failure(session, "write"), err);
  }
}

/** Seqs reserved ahead at a time: one write of the records bucket per this many events. */
const RESERVE_SEQS = 4096;

/** A writer's reservation of seqs: before an event takes a seq past it, it is moved RESERVE_SEQS further. */
export class SeqReservation {
  private constructor(
    private readonly records: KV,
    private readonly session: string,
    private readonly incarnation: string,
    /** The last seq reserved (0: unknown, or none). */
    public reserved: number,
  ) {}

  /** Read only when the log holds no message (`last` undefined): else the first commit reserves anew. */
  static async open(
    records: KV,
    session: string,
    incarnation: string,
    last: unknown,
  ): Promise<SeqReservation> {
    const reserved = last ? 0 : await readMark(records, session, incarnation);
    return new SeqReservation(records, session, incarnation, reserved);
  }

  async reserve(seq: number): Promise<void> {
    if (seq <= this.reserved) return;
    this.reserved = await writeMark(this.records, this.session, this.incarnation, seq + RESERVE_SEQS);
  }
}

function failure(session: string, what: string): string {
  return `event log of session ${session}: cannot ${what} where its seqs end (key ${markKey(session)} of the records bucket)`;
}
