// Asks the person at the terminal to answer a session's permission request or question, one at a time; a
// question someone else answered first is withdrawn.
import { createInterface } from "node:readline/promises";
import type { AnswerBody } from "../../../protocol/api.js";
import type { SessionEvent } from "../../../protocol/events.js";
import { terminalText } from "../../output.js";

type Request = Extract<SessionEvent, { type: "permission.requested" | "question.requested" }>;

export interface Rules {
  allow: string[];
  deny: string[];
  /** A person can be asked (stdin and stderr are terminals). */
  interactive: boolean;
}

/** The answer the flags give without asking, if any. */
export function fromFlags(request: Request, rules: Rules): AnswerBody | undefined {
  if (request.type !== "permission.requested") return undefined;
  const tool = request.data.tool;
  if (rules.deny.includes(tool)) return { decision: "deny", reason: "--deny on the command line" };
  if (rules.allow.includes(tool)) return { decision: "allow", reason: "--allow on the command line" };
  return undefined;
}

/** Asks at the terminal; undefined when `signal` withdraws the question first. */
export async function askPerson(request: Request, signal: AbortSignal): Promise<AnswerBody | undefined> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  // While asking, the terminal is in raw mode and a Ctrl-C is a key readline reads, not a signal: unheard, readline
  // closed itself, the question read as answered elsewhere and the turn waited for its ask timeout. It is the
  // signal it would have been, for the command's own handler (interrupt the turn, then detach).
  rl.on("SIGINT", () => process.kill(process.pid, "SIGINT"));
  try {
    if (request.type === "permission.requested") {
      const args = JSON.stringify(request.data.arguments ?? {});
      const asked = terminalText(`Allow tool ${request.data.tool} ${args}?`);
      const reply = await rl.question(`\n${asked} [y/N] `, { signal });
      return /^y(es)?$/i.test(reply.trim())
        ? { decision: "allow", reason: "allowed at the terminal" }
        : { decision: "deny", reason: "denied at the terminal" };
    }
    const d = request.data;
    const options = d.options ?? [];
    const about = (o: string) => (d.option_descriptions?.[o] ? ` — ${d.option_descriptions[o]}` : "");
    const listed = options.map((o, i) => `  ${i + 1}. ${o}${about(o)}`).join("\n");
    // nui's title, message and header as sent; each line once.
    const lines = [...new Set([d.title, d.message, d.header ? `[${d.header}] ${d.question}` : d.question])];
    const asked = terminalText(`${lines.filter(Boolean).join("\n")}\n${listed ? `${listed}\n` : ""}`);
    const reply = await rl.question(`\n${asked}answer${options.length ? " (number or text)" : ""}: `, {
      signal,
    });
    const picked = Number(reply.trim());
    const answer =
      Number.isInteger(picked) && picked >= 1 && picked <= options.length ? options[picked - 1]! : reply;
    return { answer };
  } catch (err) {
    if ((err as Error).name === "AbortError") return undefined;
    throw err;
  } finally {
    rl.close();
  }
}
