// Messages written straight onto a cluster session's subject with the nats client, as a bug or a bad node would:
// a damaged one (a payload that is no batch of events) and a good one after it, for the damaged-log tests.
import { randomUUID } from "node:crypto";
import type { SessionEvent } from "../protocol/events.js";
import type { NatsContext } from "../store/nats/context.js";
import { batchHeaders, encodeBatch } from "../store/nats/log-read.js";

/** Publishes a payload that is no batch of events as the message holding `seq`; its stream sequence. */
export async function publishDamaged(ctx: NatsContext, session: string, seq: number): Promise<number> {
  const ack = await ctx.js.publish(ctx.subject(session), "{not a batch", {
    headers: batchHeaders(seq, seq, "bad-node", randomUUID()),
  });
  return ack.seq;
}

/** Publishes a good message holding one event of `type` as `seq`. */
export async function publishEvent(
  ctx: NatsContext,
  session: string,
  seq: number,
  type: string,
): Promise<void> {
  const event = { seq, ts: new Date().toISOString(), type, data: {} } as unknown as SessionEvent;
  await ctx.js.publish(ctx.subject(session), encodeBatch([event]), {
    headers: batchHeaders(seq, seq, "bad-node", randomUUID()),
  });
}
