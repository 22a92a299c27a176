// Requests that wait for an answer (tool calls, permissions, questions) are log state: this index is rebuilt
// from the log on open and kept in step with every append, so each request is resolved exactly once, even
// across restarts and with concurrent answers.
import type { NewEvent } from "../protocol/events.js";

export const REQUEST_KINDS = {
  "tool.call": "tool.result",
  "permission.requested": "permission.resolved",
  "question.requested": "question.answered",
} as const;

export type RequestKind = keyof typeof REQUEST_KINDS;
type AnswerKind = (typeof REQUEST_KINDS)[RequestKind];

const ANSWER_TO_REQUEST = Object.fromEntries(
  Object.entries(REQUEST_KINDS).map(([request, answer]) => [answer, request]),
) as Record<AnswerKind, RequestKind>;

export interface PendingRequest {
  kind: RequestKind;
  id: string;
  turn?: string;
  data: Record<string, unknown>;
}

const key = (kind: RequestKind, id: string) => `${kind}\u0000${id}`;

export class PendingRequests {
  private readonly open = new Map<string, PendingRequest>();

  /** Feed every event, in log order. */
  observe(event: NewEvent): void {
    const data = event.data as { id?: string };
    if (typeof data.id !== "string") return;
    if (event.type in REQUEST_KINDS) {
      const kind = event.type as RequestKind;
      this.open.set(key(kind, data.id), { kind, id: data.id, turn: event.turn, data: event.data });
    } else if (event.type in ANSWER_TO_REQUEST) {
      this.open.delete(key(ANSWER_TO_REQUEST[event.type as AnswerKind], data.id));
    }
  }

  has(kind: RequestKind, id: string): boolean {
    return this.open.has(key(kind, id));
  }

  /** Removes and returns the request if it is still pending: whoever gets it is the one to answer it. */
  take(kind: RequestKind, id: string): PendingRequest | undefined {
    const k = key(kind, id);
    const request = this.open.get(k);
    this.open.delete(k);
    return request;
  }

  list(turn?: string): PendingRequest[] {
    const all = [...this.open.values()];
    return turn === undefined ? all : all.filter((request) => request.turn === turn);
  }
}
