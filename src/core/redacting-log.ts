// The one boundary every event crosses on its way to a session's log: secrets are replaced here, so no harness
// family, error path or stderr tail can write one. Deltas are a stream: a secret split over two deltas is
// caught by holding back a tail that could be a secret's start until the next delta (or any other event of
// the session) shows whether it is one, or until the stream goes quiet (HELD_IDLE_MS): an agent that says
// "working" and then works for minutes must not have its word held back all that time.
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import type { AppendOptions, EventLog, PendingWrites } from "./event-log.js";
import type { Redactor } from "./redact.js";

/** Wraps `log` even while `redactor` knows no secret: a session learns some once its harness runs (Redactor.add). */
export function redactingLog(log: EventLog, redactor: Redactor): EventLog {
  return new RedactingLog(log, redactor);
}

/**
 * A held tail goes out once no delta came for this long. The tail is chosen by which characters the secrets use,
 * not by whether it starts one (Redactor.pendingTail says why), and with a secret's encoded forms (base64, percent)
 * that is nearly any word's end: held until the next event, the last word before a long tool run or a wait for a
 * person stayed unseen. A secret a stream pauses in the middle of for this long is written in two parts; the time
 * does not depend on the text, so it tells nothing of the secrets.
 */
export const HELD_IDLE_MS = 500;

/** Delta text held back, and the append whose batch it was cut from. */
interface Held {
  text: string;
  batch: number;
}

class RedactingLog implements EventLog {
  /** Delta text held back, by turn ("" for none). */
  private readonly held = new Map<string, Held>();
  /** Counts the appends that hold text back, so a failed one forgets only what it held. */
  private batches = 0;
  /** Counts appends: an idle release that waited out a stall (timers run before what came meanwhile is read) sees one. */
  private appends = 0;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: EventLog,
    private readonly redactor: Redactor,
  ) {}

  get session(): string {
    return this.log.session;
  }

  get lastSeq(): number {
    return this.log.lastSeq;
  }

  /** Where retention left the log starting: without it a live session's readers are told 1 (no dropped notice). */
  get firstSeq(): number | undefined {
    return this.log.firstSeq;
  }

  get pending(): PendingWrites | undefined {
    return this.log.pending;
  }

  append(events: NewEvent[], options?: AppendOptions): Promise<SessionEvent[]> {
    const out: NewEvent[] = [];
    let batch = 0;
    this.appends++;
    for (const event of events) {
      if (event.type === "assistant.delta") {
        const key = event.turn ?? "";
        const prior = this.held.get(key);
        const text = this.redactor.redact(
          prior === undefined ? event.data.text : prior.text + event.data.text,
        );
        const hold = this.redactor.pendingTail(text);
        if (hold > 0) {
          batch ||= ++this.batches;
          const tail = text.slice(text.length - hold);
          if (prior) {
            prior.text = tail;
            prior.batch = batch;
          } else this.held.set(key, { text: tail, batch });
        } else if (prior !== undefined) this.held.delete(key);
        // Most deltas pass unchanged: they go on as they are, with no copy made on the relay's hot path.
        if (hold === 0 && text === event.data.text) out.push(event);
        else if (text.length > hold) {
          out.push({ ...event, data: { ...event.data, text: text.slice(0, text.length - hold) } });
        }
        continue;
      }
      this.release(out);
      out.push(this.redactor.redactDeep(event));
    }
    if (this.held.size > 0) this.armIdle();
    else this.disarmIdle();
    if (out.length === 0) return Promise.resolve([]);
    const written = this.log.append(out, options);
    // A held tail is the end of text that is lost with its batch: released later, it would follow the gap alone.
    if (batch > 0) written.catch(() => this.forget(batch));
    return written;
  }

  read(after: number, limit?: number): Promise<SessionEvent[]> {
    return this.log.read(after, limit);
  }

  openState(): { requests: SessionEvent[]; openTurns: string[] } | undefined {
    return this.log.openState?.();
  }

  subscribe(listener: (events: SessionEvent[]) => void): () => void {
    return this.log.subscribe(listener);
  }

  async close(): Promise<void> {
    this.disarmIdle();
    const out: NewEvent[] = [];
    this.release(out);
    if (out.length > 0) await this.log.append(out).catch(() => {});
    await this.log.close();
  }

  private armIdle(): void {
    if (this.idle) this.idle.refresh();
    else this.idle = setTimeout(() => this.releaseIdle(), HELD_IDLE_MS).unref();
  }

  private disarmIdle(): void {
    clearTimeout(this.idle);
    this.idle = undefined;
  }

  /** The stream went quiet: what it held goes out, unless a delta read in this same turn of the loop comes first. */
  private releaseIdle(): void {
    this.idle = undefined;
    const seen = this.appends;
    setImmediate(() => {
      if (this.appends !== seen || this.held.size === 0) return;
      const out: NewEvent[] = [];
      this.release(out);
      // As at close: a log that cannot take it fails its session's next write, which says why.
      this.log.append(out).catch(() => {});
    });
  }

  /** What was held back was not a secret after all (something else came first): it goes out as a delta. */
  private release(out: NewEvent[]): void {
    for (const [turn, { text }] of this.held) {
      out.push({ type: "assistant.delta", ...(turn ? { turn } : {}), data: { text } } as NewEvent);
    }
    this.held.clear();
  }

  private forget(batch: number): void {
    for (const [turn, held] of this.held) if (held.batch === batch) this.held.delete(turn);
  }
}
