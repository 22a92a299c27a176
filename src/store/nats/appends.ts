// One append is one unit in the log: all its events are stored, or none is seen. An append past the size a
// message carries is cut into several messages, and a later one may fail (refused, the node lost) after earlier
// ones were stored (nats-server 2.9 has no atomic batch publish). That append was never acknowledged: readers
// must not see its first part, and the writer's next append takes its seqs. So a message that ends inside an
// append names it (header APPEND: its first and last seq), and its events from that append's first seq on are
// held until the messages that complete it follow; a message that does not continue them is the next append,
// written over the incomplete one with the same seqs, and they are dropped.
import type { MsgHdrs } from "@nats-io/transport-node";
import type { SessionEvent } from "../../protocol/events.js";

export const APPEND = "Brain-Append";

/** The header of a message ending inside the append of seqs `from`-`to`. */
export function appendHeader(from: number, to: number): string {
  return `${from}-${to}`;
}

/** The first seq of the append a message ends inside, or undefined when it ends one (or is of an older Brain). */
export function openAppend(header: MsgHdrs): number | undefined {
  const value = header.get(APPEND);
  if (!value) return undefined;
  const from = Number(value.split("-")[0]);
  return Number.isInteger(from) && from >= 1 ? from : undefined;
}

/** A message as the assembler needs it: its first seq, and where the append it ends inside began. */
export interface AppendPart {
  first: number;
  open?: number | undefined;
}

/** Takes the session's messages in stream order and gives out the events of complete appends, each once. */
export class AppendAssembler {
  constructor(
    /** The last seq given out (or known to the caller). */
    public shown: number,
    /** Events stored of an append not complete yet. */
    public held: SessionEvent[] = [],
  ) {}

  take(part: AppendPart, events: SessionEvent[]): SessionEvent[] {
    const last = this.held.at(-1);
    if (last && part.first !== last.seq + 1) this.held = [];
    let seq = this.held.at(-1)?.seq ?? this.shown;
    for (const e of events) {
      // Seqs only go up: a batch a raced stale writer got in (nats-server 2.9 lets concurrent publishes with one
      // expected sequence all through) is skipped where it repeats seqs, never shown twice.
      if (e.seq <= seq) continue;
      this.held.push(e);
      seq = e.seq;
    }
    const open = part.open ?? Number.POSITIVE_INFINITY;
    const out = this.held.filter((e) => e.seq < open);
    this.held = this.held.filter((e) => e.seq >= open);
    if (out.length > 0) this.shown = out.at(-1)!.seq;
    return out;
  }
}
