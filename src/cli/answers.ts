// How `brain run` answers a session's permission requests: --allow/--deny flags first, then the person at the
// terminal when there is one; otherwise a denial that says how to allow it next time.
import { createInterface } from "node:readline/promises";
import type { Session } from "../core/session.js";
import type { SessionEvent } from "../protocol/events.js";

export interface AnswerRules {
  allow: string[];
  deny: string[];
  interactive: boolean;
}

export function answerPermissions(session: Session, rules: AnswerRules): () => void {
  const queue: Extract<SessionEvent, { type: "permission.requested" }>[] = [];
  let busy = false;
  const next = async () => {
    if (busy) return;
    busy = true;
    while (queue.length) {
      const { data } = queue.shift()!;
      const decision = await decide(data.tool, data.arguments, rules);
      await session
        .answer({ type: "permission.resolved", data: { id: data.id, ...decision } })
        .catch(() => {});
    }
    busy = false;
  };
  return session.log.subscribe((events) => {
    for (const event of events) if (event.type === "permission.requested") queue.push(event);
    void next();
  });
}

async function decide(tool: string, args: unknown, rules: AnswerRules) {
  if (rules.deny.includes(tool)) return { decision: "deny" as const, reason: "--deny on the command line" };
  if (rules.allow.includes(tool))
    return { decision: "allow" as const, reason: "--allow on the command line" };
  if (!rules.interactive) {
    return {
      decision: "deny" as const,
      reason: `no one to ask (not a terminal); run with --allow ${tool} to allow it`,
    };
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const reply = await rl.question(`\nAllow tool ${tool} ${JSON.stringify(args ?? {})}? [y/N] `);
    return /^y(es)?$/i.test(reply.trim())
      ? { decision: "allow" as const, reason: "allowed at the terminal" }
      : { decision: "deny" as const, reason: "denied at the terminal" };
  } finally {
    rl.close();
  }
}
