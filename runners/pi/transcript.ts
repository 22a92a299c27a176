// The native state: one append-only JSONL file in the session's native dir. Each line is an entry:
//
//   {"type":"session","version":1,"id":"…","created_at":"…"}        first line: the conversation's identity
//   {"type":"message","message":{…pi message…}}                     every user, assistant and tool result message
//   {"type":"compaction","summary":"…","first_kept":N,…}            messages before the N-th are now the summary
//
// The model's context is rebuilt from the entries alone (context()), the same way in the live process after a
// compaction and in a fresh process that loads a restored copy, so both send the same request.
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "@mariozechner/pi-ai";
import type { NativeFile } from "../../src/protocol/runner.js";

export const TRANSCRIPT = "conversation.jsonl";

export interface SessionEntry {
  type: "session";
  version: 1;
  id: string;
  created_at: string;
}
export interface MessageEntry {
  type: "message";
  message: Message;
}
export interface CompactionEntry {
  type: "compaction";
  summary: string;
  /** Ordinal (0-based, counting message entries only) of the first message kept verbatim. */
  first_kept: number;
  /** The context's size in tokens when it was compacted. */
  tokens_before: number;
  /** Stored so the summary message is the same object in every process that rebuilds it. */
  timestamp: number;
}
export type Entry = SessionEntry | MessageEntry | CompactionEntry;

export interface Context {
  messages: Message[];
  /** For each context message, its ordinal among the file's messages; undefined for the summary. */
  ordinals: (number | undefined)[];
}

export class Transcript {
  readonly path: string;
  /** The conversation's id: the provider's cache key, the same in every restored copy. */
  readonly id: string;
  private readonly messages: Message[] = [];
  private compaction: CompactionEntry | undefined;
  private exists: boolean;
  /** The file ends in a torn line (a crash mid-write): the next append starts a new line first. */
  private torn = false;

  /** Loads `dir`'s transcript if there is one. Reads only: passive open. */
  constructor(
    private readonly dir: string,
    log: (message: string) => void,
  ) {
    this.path = join(dir, TRANSCRIPT);
    const text = existsSync(this.path) ? readFileSync(this.path, "utf8") : "";
    this.exists = text.length > 0;
    let id: string | undefined;
    if (this.exists) {
      this.torn = text.length > 0 && !text.endsWith("\n");
      for (const [i, line] of text.split("\n").entries()) {
        if (!line) continue;
        const entry = parseEntry(line);
        if (!entry) log(`runner pi: ${TRANSCRIPT} line ${i + 1} is not an entry; skipped`);
        else if (entry.type === "session") id ??= entry.id;
        else if (entry.type === "message") this.messages.push(entry.message);
        else this.compaction = entry;
      }
    }
    this.id = id ?? randomUUID();
  }

  /** The context the model sees: the latest compaction's summary, then the messages it kept and all later ones. */
  context(): Context {
    const c = this.compaction;
    if (!c) return { messages: [...this.messages], ordinals: this.messages.map((_, i) => i) };
    const kept = this.messages.slice(c.first_kept);
    return {
      messages: [summaryMessage(c), ...kept],
      ordinals: [undefined, ...kept.map((_, i) => c.first_kept + i)],
    };
  }

  appendMessage(message: Message): void {
    this.write({ type: "message", message });
    this.messages.push(message);
  }

  appendCompaction(entry: Omit<CompactionEntry, "type">): void {
    const full: CompactionEntry = { type: "compaction", ...entry };
    this.write(full);
    this.compaction = full;
  }

  /** The file for a checkpoint, with its exact size; none before the first message. */
  file(): NativeFile[] {
    if (!this.exists) return [];
    return [{ path: TRANSCRIPT, size: statSync(this.path).size, append_only: true }];
  }

  /** Appends one entry (the session header first, when the file is new). Throws when the disk does. */
  private write(entry: Entry): void {
    let text = `${JSON.stringify(entry)}\n`;
    if (!this.exists) {
      const header: SessionEntry = {
        type: "session",
        version: 1,
        id: this.id,
        created_at: new Date().toISOString(),
      };
      text = `${JSON.stringify(header)}\n${text}`;
      mkdirSync(this.dir, { recursive: true });
    }
    if (this.torn) text = `\n${text}`;
    appendFileSync(this.path, text);
    this.exists = true;
    this.torn = false;
  }
}

/** The user message that stands for everything a compaction summarized (the form pi-coding-agent uses). */
export function summaryMessage(c: CompactionEntry): Message {
  const text = `The conversation before this point was compacted into this summary:\n\n<summary>\n${c.summary}\n</summary>`;
  return { role: "user", content: [{ type: "text", text }], timestamp: c.timestamp };
}

function parseEntry(line: string): Entry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== "object") return undefined;
  const entry = value as Partial<Entry>;
  if (entry.type === "session" && typeof entry.id === "string") return entry as SessionEntry;
  if (entry.type === "message" && entry.message && typeof entry.message === "object")
    return entry as MessageEntry;
  if (
    entry.type === "compaction" &&
    typeof entry.summary === "string" &&
    Number.isInteger(entry.first_kept)
  ) {
    return entry as CompactionEntry;
  }
  return undefined;
}
