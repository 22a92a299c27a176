// Requests that wait for an answer (tool calls, permissions, questions) are log state: this index is rebuilt
// from the log on open and kept in step with every append, so each request is resolved exactly once, even
// across restarts and with concurrent answers.
import type { NewEvent } from "../protocol/events.js";
import type { SessionStore } from "./store.js";

export const REQUEST_KINDS = {
  "tool.call": "tool.result",
  "permission.requested": "permission.resolved",
  "question.requested": "question.answered",
} as const;

export type RequestKind = keyof typeof REQUEST_KINDS;

/** Each event type that opens or answers a request, and the kind of request it is about. */
const ROLES = new Map<string, { kind: RequestKind; opens: boolean }>(
  (Object.entries(REQUEST_KINDS) as [RequestKind, string][]).flatMap(([kind, answer]) => [
    [kind, { kind, opens: true }],
    [answer, { kind, opens: false }],
  ]),
);

export interface PendingRequest {
  kind: RequestKind;
  id: string;
  turn?: string;
  data: Record<string, unknown>;
  /** When it was logged (the event's ts), when it was read from the log; not yet known for one being appended. */
  ts?: string;
}

/** A request and when it was opened, so list() gives them in log order across kinds. */
interface Open {
  request: PendingRequest;
  order: number;
}

export class PendingRequests {
  /**
   * By kind, then id: every appended event is looked up here (a tool call twice), and one map per kind needs no
   * `kind + id` key string made and hashed per lookup.
   */
  private readonly open: Record<RequestKind, Map<string, Open>> = {
    "tool.call": new Map(),
    "permission.requested": new Map(),
    "question.requested": new Map(),
  };
  private opened = 0;

  /** Feed every event, in log order. */
  observe(event: NewEvent): void {
    const role = ROLES.get(event.type);
    if (role === undefined) return;
    const data = event.data as { id?: string };
    if (typeof data.id !== "string") return;
    if (role.opens) {
      const { ts } = event as { ts?: string };
      const request = {
        kind: role.kind,
        id: data.id,
        turn: event.turn,
        data: event.data,
        ...(ts ? { ts } : {}),
      };
      const open = this.open[role.kind];
      // A repeated id replaces the earlier request in its place.
      open.set(data.id, { request, order: open.get(data.id)?.order ?? this.opened++ });
    } else this.open[role.kind].delete(data.id);
  }

  /** Takes `other`'s requests in place of its own: an index rebuilt from the log, given to whoever holds this one. */
  adopt(other: PendingRequests): void {
    for (const kind of Object.keys(this.open) as RequestKind[]) {
      this.open[kind].clear();
      for (const [id, entry] of other.open[kind]) this.open[kind].set(id, entry);
    }
    this.opened = other.opened;
  }

  has(kind: RequestKind, id: string): boolean {
    return this.open[kind].has(id);
  }

  /** Removes and returns the request if it is still pending: whoever gets it is the one to answer it. */
  take(kind: RequestKind, id: string): PendingRequest | undefined {
    const open = this.open[kind];
    const found = open.get(id);
    if (found === undefined) return undefined;
    open.delete(id);
    return found.request;
  }

  /** The pending requests (of `turn` only, when given), in the order they were opened. */
  list(turn?: string): PendingRequest[] {
    const all: Open[] = [];
    for (const open of Object.values(this.open)) {
      for (const entry of open.values())
        if (turn === undefined || entry.request.turn === turn) all.push(entry);
    }
    return all.sort((a, b) => a.order - b.order).map((entry) => entry.request);
  }
}

/**
 * The last seq of a stored log (a session not open here) and its pending requests, as folding every event would
 * give them: from the store's tail of the log, or from the whole log for a store that cannot give its tail.
 */
export async function pendingInStore(
  store: SessionStore,
  id: string,
): Promise<{ lastSeq: number; pending: PendingRequest[] }> {
  const found = new PendingRequests();
  if (store.tail) {
    // The tail's requests are the ones still open, in the order they were made: folded, they list as the log does.
    const { lastSeq, requests } = await store.tail(id);
    for (const request of requests) found.observe(request);
    return { lastSeq, pending: found.list() };
  }
  // A page at a time (a view of a long log of large prompts must not hold it whole). The last event's seq, not the
  // count: a compacted log has gaps in its seqs.
  let lastSeq = 0;
  for (;;) {
    const page = await store.readEvents(id, { after: lastSeq, limit: 1000 });
    if (page.length === 0) break;
    for (const event of page) found.observe(event);
    lastSeq = page.at(-1)!.seq;
  }
  return { lastSeq, pending: found.list() };
}
