// How `brain run` answers a session's permission requests and questions: --allow/--deny flags first, then the
// person at the terminal when there is one. Without a terminal a permission is denied at once, with how to allow
// it next time; a question is left to the session's ask timeout (so an extension's ask_user() does not wait
// forever), and when it expires unanswered the CLI says how it could have been answered.
import type { Session } from "../core/session.js";
import type { AnswerBody } from "../protocol/api.js";
import type { SessionEvent } from "../protocol/events.js";
import { askPerson, fromFlags } from "./commands/remote/ask.js";
import { terminalText } from "./output.js";

type Request = Extract<SessionEvent, { type: "permission.requested" | "question.requested" }>;

export interface AnswerRules {
  allow: string[];
  deny: string[];
  interactive: boolean;
}

/** Asks a person; undefined when `signal` withdraws the request first (the session answered it itself). */
export type AskPerson = (request: Request, signal: AbortSignal) => Promise<AnswerBody | undefined>;

export const HOW_TO_ANSWER =
  "brain run can ask only on a terminal; to answer from elsewhere, run the session on the daemon " +
  "(`brain serve`, then `brain run --server URL ...`) and answer with `brain attach SESSION` or the web UI";

export function answerRequests(
  session: Session,
  rules: AnswerRules,
  options: { ask?: AskPerson; err?: NodeJS.WritableStream } = {},
): () => void {
  const ask = options.ask ?? askPerson;
  const err = options.err ?? process.stderr;
  const open = new Map<string, { request: Request; withdraw: AbortController; ours?: boolean }>();
  const queue: Request[] = [];
  let busy = false;
  const next = async () => {
    if (busy) return;
    busy = true;
    while (queue.length) {
      const request = queue.shift()!;
      const entry = open.get(request.data.id);
      if (!entry) continue; // answered (or timed out) meanwhile
      const answer = await decide(request, rules, ask, entry.withdraw.signal);
      if (!answer) continue;
      entry.ours = true;
      const event =
        "decision" in answer
          ? { type: "permission.resolved" as const, data: { id: request.data.id, ...answer } }
          : { type: "question.answered" as const, data: { id: request.data.id, ...answer } };
      await session.answer(event).catch(() => {});
    }
    busy = false;
  };
  return session.log.subscribe((events) => {
    for (const event of events) {
      if (event.type === "permission.requested" || event.type === "question.requested") {
        open.set(event.data.id, { request: event, withdraw: new AbortController() });
        queue.push(event);
      } else if (event.type === "permission.resolved" || event.type === "question.answered") {
        const entry = open.get(event.data.id);
        open.delete(event.data.id);
        entry?.withdraw.abort();
        const unanswered = event.type === "question.answered" && event.data.answer === "";
        if (unanswered && entry?.request.type === "question.requested" && !entry.ours) {
          const why = event.data.reason ? ` (${event.data.reason})` : "";
          const how = rules.interactive ? "" : `: ${HOW_TO_ANSWER}`;
          // JSON.stringify escapes C0 controls only: a C1 CSI (U+009B) in the question went to the terminal raw.
          err.write(
            `${terminalText(`[question ${JSON.stringify(entry.request.data.question)} got no answer${why}${how}]`)}\n`,
          );
        }
      }
    }
    void next();
  });
}

async function decide(
  request: Request,
  rules: AnswerRules,
  ask: AskPerson,
  signal: AbortSignal,
): Promise<AnswerBody | undefined> {
  const flagged = fromFlags(request, rules);
  if (flagged) return flagged;
  if (rules.interactive) return ask(request, signal);
  if (request.type === "permission.requested") {
    return {
      decision: "deny",
      reason: `no one to ask (not a terminal); run with --allow ${request.data.tool} to allow it`,
    };
  }
  // A question has no flag to answer it: the session's ask timeout expires it, and the subscriber above says how.
  return undefined;
}
