// What a session's log takes of the events stream, for limits.log_bytes_per_session (core/log-bound.ts). JetStream
// tells a subject's message count, never its bytes, so they are the sum of the subject's messages' data as the
// stream holds them now. A prompt asks before each turn: the sum is kept per session with the stream sequences it
// spans, and only messages past the last one counted are read again. The whole log is read again when the
// subject's first message is no longer the one counted from (an operator's max_age or max_bytes let it go, or the
// session was removed and made again): what the stream let go no longer counts.
import type { StoredMsg } from "@nats-io/jetstream";
import type { MessageRef } from "./log-read.js";

interface Counted {
  /** The stream sequences of the first and last messages counted. */
  from: number;
  to: number;
  bytes: number;
}

export interface LogMessages {
  first(): Promise<MessageRef | undefined>;
  last(): Promise<MessageRef | undefined>;
  messagesAfter(after: number, end: number): AsyncGenerator<StoredMsg>;
}

export class LogByteCounts {
  private readonly counted = new Map<string, Counted>();

  async bytes(id: string, log: LogMessages): Promise<number> {
    const last = await log.last();
    const first = last && (await log.first());
    if (!last || !first) {
      this.counted.delete(id);
      return 0;
    }
    const known = this.counted.get(id);
    const base = known && known.from === first.streamSeq && known.to <= last.streamSeq ? known : undefined;
    let bytes = base?.bytes ?? 0;
    for await (const msg of log.messagesAfter(base ? base.to : first.streamSeq - 1, last.streamSeq)) {
      bytes += msg.data.length;
    }
    const latest = this.counted.get(id);
    if (!latest || latest.to <= last.streamSeq) {
      this.counted.set(id, { from: first.streamSeq, to: last.streamSeq, bytes });
    }
    return bytes;
  }

  forget(id: string): void {
    this.counted.delete(id);
  }
}
