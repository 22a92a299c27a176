// How a batch of events is cut into messages the stream takes, and cut again when the stream's limit was lowered
// under a log that is open.
import type { SessionEvent } from "../../protocol/events.js";
import type { NatsContext } from "./context.js";
import { NatsStoreError } from "./errors.js";

/**
 * The messages a batch is sent as, in order: cut under the limit known when it began, and once more from the
 * message the stream refused, when that refusal taught a lower limit (an operator lowered the stream's
 * max_msg_size while the log was open: ./errors.ts refusedByStream reads it again). The refused message stored
 * nothing, so its seqs are still the batch's to send. A message given is stored once the next is asked for.
 */
export class BatchCuts {
  private cuts: { events: SessionEvent[]; sizes: number[] }[];
  /** The message next() gave last, while not refused: the next call takes it as stored. */
  private index = -1;
  /** Where the message next() gave last starts in the batch. */
  private at = 0;
  private limit: MessageLimit;
  private recut = false;

  constructor(
    private readonly events: SessionEvent[],
    private readonly where: string,
    private readonly ctx: Pick<NatsContext, "nc" | "maxMsgSize">,
  ) {
    this.limit = this.limitNow();
    this.cuts = chunks(events, where, this.limit);
  }

  /** The next message's events, their sizes, and where it starts in the batch; undefined once all are sent. */
  next(): { events: SessionEvent[]; sizes: number[]; at: number } | undefined {
    if (this.index >= 0) this.at += this.cuts[this.index]!.events.length;
    const cut = this.cuts[++this.index];
    return cut && { ...cut, at: this.at };
  }

  /**
   * A refusal of the message next() gave: "recut" when what is left was cut again under a lower limit; else the
   * refusal is thrown (the stream's words, which name the message, the limit and what to do, also when an event
   * alone is over the new limit).
   */
  refused(err: unknown): "recut" {
    const lower = this.limitNow();
    const tooLarge = err instanceof NatsStoreError && err.code === "payload_too_large";
    if (this.recut || !tooLarge || lower.bytes >= this.limit.bytes) throw err;
    let cuts: { events: SessionEvent[]; sizes: number[] }[];
    try {
      cuts = chunks(this.events.slice(this.at), this.where, lower);
    } catch {
      throw err;
    }
    [this.recut, this.limit, this.index, this.cuts] = [true, lower, -1, cuts];
    return "recut";
  }

  private limitNow(): MessageLimit {
    return messageLimit(this.ctx.nc.info?.max_payload, this.ctx.maxMsgSize);
  }
}

/** Bytes per message, under the server's default 1 MB max_payload with room for headers. */
const MAX_MESSAGE = 900 * 1024;
/** What a message's headers (Brain's and JetStream's) take of the server's max_payload, with room to spare. */
const HEADER_ROOM = 4 * 1024;

/** The most a message may hold, and the words that say why. */
export interface MessageLimit {
  bytes: number;
  why: string;
}

/**
 * Bytes a message may hold: MAX_MESSAGE, or less when the server carries less (`maxPayload`, an operator's
 * setting): a message past it is refused by the client at every try, and the append failed only once the whole
 * retry budget was spent, whatever its size. Less again when the events stream takes less (`maxMsgSize`, its
 * max_msg_size): a batch of events that each fit was sent as one message the stream refused, all of it.
 */
export function messageLimit(maxPayload: number | undefined, maxMsgSize?: number): MessageLimit {
  const payload: MessageLimit =
    maxPayload === undefined || maxPayload - HEADER_ROOM >= MAX_MESSAGE
      ? { bytes: MAX_MESSAGE, why: "the cluster store takes events up to" }
      : {
          bytes: Math.max(1, maxPayload - HEADER_ROOM),
          why: `the NATS server carries messages of up to ${maxPayload} bytes (its max_payload), which leaves room for events up to`,
        };
  // Under it too, the headers have their room: the server counts them in a message's size against the limit.
  if (maxMsgSize === undefined || maxMsgSize <= 0 || maxMsgSize - HEADER_ROOM >= payload.bytes)
    return payload;
  return {
    bytes: Math.max(1, maxMsgSize - HEADER_ROOM),
    why: `the events stream takes messages of up to ${maxMsgSize} bytes (its max_msg_size), which leaves room for events up to`,
  };
}

/** The batch cut into messages under the size limit, with each event's size; one event over it is refused. */
export function chunks(
  events: SessionEvent[],
  where: string,
  limit: MessageLimit,
): { events: SessionEvent[]; sizes: number[] }[] {
  const out: { events: SessionEvent[]; sizes: number[] }[] = [];
  let current: SessionEvent[] = [];
  let sizes: number[] = [];
  let size = 0;
  for (const e of events) {
    const bytes = Buffer.byteLength(JSON.stringify(e));
    if (bytes > limit.bytes) {
      throw new NatsStoreError(
        "payload_too_large",
        `${where}: event ${e.seq} (${e.type}) is ${bytes} bytes; ${limit.why} ${limit.bytes}`,
      );
    }
    if (size + bytes > limit.bytes && current.length > 0) {
      out.push({ events: current, sizes });
      current = [];
      sizes = [];
      size = 0;
    }
    current.push(e);
    sizes.push(bytes);
    size += bytes;
  }
  if (current.length > 0) out.push({ events: current, sizes });
  return out;
}
