// How a batch of events is cut into messages the stream takes, and cut again when the stream's limit was lowered
// under a log that is open.
import type { SessionEvent } from "../../protocol/events.js";
import type { NatsContext } from "./context.js";
import { NatsStoreError } from "./errors.js";
import { chunks, type MessageLimit, messageLimit } from "./log-read.js";

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
