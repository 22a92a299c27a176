// Idempotency keys of a session's commands: a client that retries a command after an ambiguous failure (a
// timeout while the owner failed over) sends the same key, and the command runs once. The key is written into
// the event that records the command (user.prompt, user.steer, user.interrupt, an answer, checkpoint.created, a
// rebuild's session.recovered), so the log itself says whether it ran, on whichever node, and a node taking the
// session over knows too.
import { createHash } from "node:crypto";
import type { SessionEvent } from "../protocol/events.js";
import { type EventLog, forEachEvent } from "./event-log.js";

/** The events that carry a command's key. */
export type KeyedEventType =
  | "user.prompt"
  | "user.steer"
  | "user.interrupt"
  | "permission.resolved"
  | "question.answered"
  | "checkpoint.created"
  | "session.recovered";

export const KEYED_EVENTS: readonly KeyedEventType[] = [
  "user.prompt",
  "user.steer",
  "user.interrupt",
  "permission.resolved",
  "question.answered",
  "checkpoint.created",
  "session.recovered",
];

const KEYED_TYPES = new Set<string>(KEYED_EVENTS);

/** Whether any of `events` is of a type that carries a command's key. */
export const anyKeyed = (events: readonly { type: string }[]) => events.some((e) => KEYED_TYPES.has(e.type));

export function commandKey(event: SessionEvent): string | undefined {
  if (!(KEYED_EVENTS as readonly string[]).includes(event.type)) return undefined;
  return (event.data as { idempotency_key?: string }).idempotency_key;
}

/** The fields of each keyed event that the client sent (the rest is what the command made, or its key). */
const SENT_FIELDS: Record<KeyedEventType, readonly string[]> = {
  "user.prompt": ["text", "images"],
  "user.steer": ["text"],
  "user.interrupt": [],
  "permission.resolved": ["decision", "reason"],
  "question.answered": ["answer", "reason"],
  "checkpoint.created": [],
  "session.recovered": [],
};

/**
 * A digest of what the client sent for a command, from the data of the event that records it (or would): a retry
 * under a key must send what the first request did, else it is another command. An absent field and an empty one
 * are alike (an empty reason is not logged).
 */
export function sentDigest(type: KeyedEventType, data: Record<string, unknown>): string {
  const sent = SENT_FIELDS[type].map((field) => (data[field] === "" ? undefined : data[field]) ?? null);
  return createHash("sha256").update(canonicalJson(sent)).digest("base64url");
}

/** A digest of a request's body, whatever order its keys came in: what a keyed create's retry must send again. */
export const bodyDigest = (body: unknown): string =>
  createHash("sha256").update(canonicalJson(body)).digest("base64url");

/** JSON with every object's keys in order: the same value gives the same text, however it was built. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** The event that recorded a keyed command, and the digest of what its client sent (sentDigest). */
export interface KeyedCommand {
  event: SessionEvent;
  sent: string;
}

/** Which event recorded each key, built from the log on first use and kept in step with its appends. */
export class CommandKeys {
  private index: Map<string, KeyedCommand> | undefined;
  private loading: Promise<Map<string, KeyedCommand>> | undefined;
  /** Appends seen while the first read runs: the read may or may not include them. */
  private seenWhileLoading: SessionEvent[] = [];

  constructor(private readonly log: Pick<EventLog, "read">) {}

  observe(events: readonly SessionEvent[]): void {
    if (this.index) for (const event of events) this.add(this.index, event);
    else if (this.loading) this.seenWhileLoading.push(...events);
  }

  /** The command sent with `key`, if it ran. */
  async find(key: string): Promise<KeyedCommand | undefined> {
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
  private async load(): Promise<Map<string, KeyedCommand>> {
    const index = new Map<string, KeyedCommand>();
    await forEachEvent(this.log, (event) => this.add(index, event));
    for (const event of this.seenWhileLoading) this.add(index, event);
    this.seenWhileLoading = [];
    this.index = index;
    return index;
  }

  private add(index: Map<string, KeyedCommand>, event: SessionEvent): void {
    const key = commandKey(event);
    if (key === undefined || index.has(key)) return;
    const data = event.data as Record<string, unknown>;
    const sent = sentDigest(event.type as KeyedEventType, data);
    // Kept for as long as the session is open: a prompt's text and images, an answer's text or reason can be
    // megabytes each. A retry's answer needs only a prompt's turn, an answer's request id (and the digest).
    const slim =
      event.type === "user.prompt" || event.type === "user.steer"
        ? ({ ...event, data: { text: "", idempotency_key: key } } as SessionEvent)
        : event.type === "permission.resolved" || event.type === "question.answered"
          ? ({ ...event, data: { id: data.id, idempotency_key: key } } as SessionEvent)
          : event;
    index.set(key, { event: slim, sent });
  }
}

/** The `idempotency_key` field of a command's event, when the command was sent with a key. */
export const keyed = (key: string | undefined) => (key === undefined ? {} : { idempotency_key: key });
