// How many of pi's session-file messages Brain has read from pi's stdout. pi emits each message_end on stdout
// before it appends the message to its file, and goes on with a turn when the host that reads it dies: a resumed
// file holding more messages than Brain read has some its log never got (Brain stopped mid-turn, pi finished).
// Kept on disk beside the sessions dir (never a checkpointed file), rewritten at each message Brain reads.
import { basename, join } from "node:path";
import { readAgentFileSync, writeAgentFileSync } from "../agent-files.js";

/** The record's name, under the agent dir. */
export const SEEN_FILE = "brain-seen.json";

export interface Seen {
  /** The session file's name; null while pi has not created it yet (it writes the file at its first answer). */
  file: string | null;
  messages: number;
}

/** The roles pi stores as `message` entries of its session file when it ends one. */
const STORED_ROLES = new Set(["user", "assistant", "toolResult"]);

/** Whether a line of pi's stdout is the end of a message pi stores in its session file. */
export function storedMessageEnd(line: unknown): boolean {
  const event = line as { type?: unknown; message?: { role?: unknown } } | null;
  return event?.type === "message_end" && STORED_ROLES.has(event.message?.role as string);
}

/** The `message` entries of a session file (a torn or foreign line is not one). */
export function countMessages(native: string, file: string): number {
  let count = 0;
  for (const line of (readAgentFileSync(native, file) ?? "").split("\n")) {
    if (!line.includes('"message"')) continue;
    try {
      if ((JSON.parse(line) as { type?: unknown }).type === "message") count++;
    } catch {
      // A torn last line: pi skips it as well.
    }
  }
  return count;
}

export function readSeen(native: string, agentDir: string): Seen | undefined {
  try {
    const seen = JSON.parse(
      readAgentFileSync(native, join(native, agentDir, SEEN_FILE)) ?? "null",
    ) as Seen | null;
    return seen && typeof seen.messages === "number" ? seen : undefined;
  } catch (err) {
    // Cut short by a kill mid-write: no count to compare with.
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}

export function writeSeen(native: string, agentDir: string, seen: Seen): void {
  writeAgentFileSync(native, join(native, agentDir, SEEN_FILE), JSON.stringify(seen));
}

/**
 * The messages of `file` (the session file pi resumes) Brain never read, by the record of the last pi: 0 without
 * one, or when it was about another file.
 */
export function unseenMessages(recorded: Seen | undefined, file: string, held: number): number {
  if (!recorded || (recorded.file !== null && recorded.file !== basename(file))) return 0;
  return Math.max(0, held - recorded.messages);
}
