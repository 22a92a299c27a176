// The api harness's native state: the conversation as append-only JSONL (`conversation.jsonl` in the native
// dir), one entry a line. The next request is a pure function of this file and the session config, so a
// checkpoint restored anywhere produces the same request. Compaction is an appended entry too: the summary
// replaces every entry before it in later requests, and nothing is ever rewritten.
import { existsSync, readFileSync, statSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import type { ModelMessage } from "ai";
import type { NativeFile } from "../../core/harness.js";
import { encodeLine } from "../../protocol/ndjson.js";

export const CONVERSATION_FILE = "conversation.jsonl";

export interface StepUsage {
  input: number;
  output: number;
}

export type Entry =
  /** A user, assistant or tool message; assistant messages carry the usage of the request that made them. */
  | { type: "message"; message: ModelMessage; usage?: StepUsage }
  /** The model's summary of every entry before this one. */
  | { type: "compaction"; summary: string };

/** How the summary is put before the messages that follow it. */
export function summaryMessage(summary: string): ModelMessage {
  return {
    role: "user",
    content: `[The conversation so far was compacted. Summary of it:]\n\n${summary}`,
  };
}

export class Conversation {
  private readonly entries: Entry[] = [];
  private readonly path: string;
  private file: FileHandle | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Set when the file ends in a torn line: the next append starts with the missing newline. */
  private pendingNewline = false;
  /** Lines that could not be read (a torn last line after a crash), reported once by the harness. */
  readonly damaged: string[] = [];

  /** Passive: reads the file, if any, and nothing else. */
  constructor(dir: string) {
    this.path = join(dir, CONVERSATION_FILE);
    if (!existsSync(this.path)) return;
    const text = readFileSync(this.path, "utf8");
    for (const line of text.split("\n")) {
      if (line === "") continue;
      try {
        this.entries.push(JSON.parse(line) as Entry);
      } catch {
        this.damaged.push(line.length > 80 ? `${line.slice(0, 80)}…` : line);
      }
    }
    // A torn last line gets its newline, so the next entry starts a line of its own (the file stays append-only).
    if (text !== "" && !text.endsWith("\n")) this.pendingNewline = true;
  }

  /** What the next request sends: the last summary, if any, then every message after it. */
  messages(): ModelMessage[] {
    let start = 0;
    let summary: string | undefined;
    for (const [i, entry] of this.entries.entries()) {
      if (entry.type === "compaction") {
        start = i + 1;
        summary = entry.summary;
      }
    }
    const out: ModelMessage[] = summary === undefined ? [] : [summaryMessage(summary)];
    for (const entry of this.entries.slice(start)) if (entry.type === "message") out.push(entry.message);
    return out;
  }

  /** The input tokens of the last request made since the last compaction (0 when there was none). */
  lastInputTokens(): number {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      if (entry.type === "compaction") return 0;
      if (entry.usage) return entry.usage.input;
    }
    return 0;
  }

  get length(): number {
    return this.entries.length;
  }

  /** Appends in order; resolves once the entries are written and flushed to the OS. */
  append(...entries: Entry[]): Promise<void> {
    this.entries.push(...entries);
    const text = (this.pendingNewline ? "\n" : "") + entries.map((e) => encodeLine(e)).join("");
    this.pendingNewline = false;
    this.writing = this.writing.then(() => this.write(text));
    return this.writing;
  }

  /** Waits for every append so far and makes it durable (one fdatasync), as the end of a turn should. */
  async sync(): Promise<void> {
    await this.writing;
    await this.file?.datasync();
  }

  async checkpoint(): Promise<NativeFile[]> {
    await this.writing;
    if (!existsSync(this.path)) return [];
    return [{ path: CONVERSATION_FILE, size: statSync(this.path).size, append_only: true }];
  }

  async close(): Promise<void> {
    await this.writing.catch(() => {});
    const file = this.file;
    this.file = undefined;
    await file?.close();
  }

  private async write(text: string): Promise<void> {
    this.file ??= await open(this.path, "a");
    await this.file.write(text);
  }
}
