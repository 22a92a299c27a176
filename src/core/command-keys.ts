// Idempotency keys of a session's commands: a client that retries a command after an ambiguous failure (a
// timeout while the owner failed over) sends the same key, and the command runs once. The key is written into
// the event that records the command (user.prompt, user.steer, user.interrupt, an answer, checkpoint.created),
// so the log itself says whether it ran, on whichever node, and a node taking the session over knows too.
import type { SessionEvent } from "../protocol/events.js";
import { type EventLog, forEachEvent } from "./event-log.js";

/** The events that carry a command's key. */
export type KeyedEventType =
  | "user.prompt"
  | "user.steer"
  | "user.interrupt"
  | "permission.resolved"
  | "question.answered"
  | "checkpoint.created";

export const KEYED_EVENTS: readonly KeyedEventType[] = [
  "user.prompt",
  "user.steer",
  "user.interrupt",
  "permission.resolved",
  "question.answered",
  "checkpoint.created",
];

const KEYED_TYPES = new Set<string>(KEYED_EVENTS);

/** Whether any of `events` is of a type that carries a command's key. */
export const anyKeyed = (events: readonly { type: string }[]) => events.some((e) => KEYED_TYPES.has(e.type));

export function commandKey(event: SessionEvent): string | undefined {
  if (!(KEYED_EVENTS as readonly string[]).includes(event.type)) return undefined;
  return (event.data as { idempotency_key?: string }).idempotency_key;
}

/** Which event recorded each key, built from the log on first use and kept in step with its appends. */
export class CommandKeys {
  private index: Map<string, SessionEvent> | undefined;
  private loading: Promise<Map<string, SessionEvent>> | undefined;
  /** Appends seen while the first read runs: the read may or may not include them. */
  private seenWhileLoading: SessionEvent[] = [];

  constructor(private readonly log: Pick<EventLog, "read">) {}

  observe(events: readonly SessionEvent[]): void {
    if (this.index) for (const event of events) this.add(this.index, event);
    else if (this.loading) this.seenWhileLoading.push(...events);
  }

  /** The event that recorded the command sent with `key`, if it ran. */
  async find(key: string): Promise<SessionEvent | undefined> {
    if (!this.index) {
      this.loading ??= this.load();
      try {
        await this.loading;
      } catch (err) {
        this.loading = undefined;
        throw err;
      }
    }
    return this.index!.get(key);
  }

  /**
   * The index, read a page at a time: a log of large prompts can be far bigger than the daemon's heap, and the
   * index keeps only each key's slimmed event.
   */
  private async load(): Promise<Map<string, SessionEvent>> {
    const index = new Map<string, SessionEvent>();
    await forEachEvent(this.log, (event) => this.add(index, event));
    for (const event of this.seenWhileLoading) this.add(index, event);
    this.seenWhileLoading = [];
    this.index = index;
    return index;
  }

  private add(index: Map<string, SessionEvent>, event: SessionEvent): void {
    const key = commandKey(event);
    if (key === undefined || index.has(key)) return;
    // A prompt's text and images can be large: the answer needs only its turn, so they are not kept.
    const slim =
      event.type === "user.prompt" || event.type === "user.steer"
        ? ({ ...event, data: { text: "", idempotency_key: key } } as SessionEvent)
        : event;
    index.set(key, slim);
  }
}
