// The api harness's native state: the conversation as append-only JSONL (`conversation.jsonl` in the native
// dir), one entry a line. The next request is a pure function of this file and the session config, so a
// checkpoint restored anywhere produces the same request. Compaction is an appended entry too: the summary
// replaces every entry before it in later requests, and nothing is ever rewritten.
import { existsSync, statSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import type { ModelMessage, ToolCallPart, ToolContent, ToolModelMessage } from "ai";
import type { NativeFile } from "../../core/harness.js";
import { encodeLine } from "../../protocol/ndjson.js";
import { conversationReadLimit, readConversationFile, tooLongError } from "./conversation-file.js";

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

/** What the model is told of a call whose result was never saved: the log's word for it after a restart. */
export const UNSAVED_RESULT = "the host stopped while the tool call was running; its outcome is unknown";

/**
 * `messages` with every tool call of an assistant message answered once in the tool messages right after it.
 * A call's result is missing when Brain stopped while the call ran (the call is saved before it runs, its result
 * after): the SDK refuses to send a call without its result, so every later turn would fail. The missing ones
 * get an error result, as the log gives such a call one. A call answered twice (files written before Brain kept
 * only its own result of a call the SDK could not parse) keeps its last answer, Brain's: providers refuse two.
 */
function answered(messages: ModelMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    out.push(message);
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    const calls = message.content.filter(
      (part): part is ToolCallPart => part.type === "tool-call" && !part.providerExecuted,
    );
    if (calls.length === 0) continue;
    const replies: ToolModelMessage[] = [];
    for (let next = messages[i + 1]; next?.role === "tool"; next = messages[i + 1]) {
      replies.push(next);
      i++;
    }
    const last = new Map<string, ToolContent[number]>();
    for (const reply of replies) {
      for (const part of reply.content) if (part.type === "tool-result") last.set(part.toolCallId, part);
    }
    for (const reply of replies) {
      const content = reply.content.filter(
        (part) => part.type !== "tool-result" || last.get(part.toolCallId) === part,
      );
      if (content.length === reply.content.length) out.push(reply);
      else if (content.length > 0) out.push({ ...reply, content });
    }
    const unanswered = calls.filter((call) => !last.has(call.toolCallId));
    if (unanswered.length === 0) continue;
    out.push({
      role: "tool",
      content: unanswered.map((call) => ({
        type: "tool-result" as const,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: "error-text" as const, value: UNSAVED_RESULT },
      })),
    });
  }
  return out;
}

/**
 * `messages` without text that is empty or only whitespace. Anthropic refuses a request holding such a block ("text
 * content blocks must contain non-whitespace text"): a model's own "\n\n" before its tool calls, or a blank steer,
 * once saved would fail every later request. It tells no model anything; a message left with nothing is left out.
 */
function withoutBlankText(messages: ModelMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role !== "user" && message.role !== "assistant") out.push(message);
    else if (typeof message.content === "string") {
      if (message.content.trim() !== "") out.push(message);
    } else {
      const parts = message.content as { type: string; text?: string }[];
      const kept = parts.filter((part) => part.type !== "text" || part.text?.trim() !== "");
      if (kept.length === parts.length) out.push(message);
      else if (kept.length > 0) out.push({ ...message, content: kept } as ModelMessage);
    }
  }
  return out;
}

/** What the model is told of a failed call whose result said nothing. */
export const SILENT_FAILURE = "the tool failed without saying why";

/**
 * `messages` with every failed call's result saying something: Anthropic refuses a request holding an error result
 * with empty content ("content cannot be empty if `is_error` is true"), as a tool that fails silently gives (an MCP
 * result `{isError: true, content: []}`), and the result stays in the conversation for every later request.
 */
function withWordedErrors(messages: ModelMessage[]): ModelMessage[] {
  return messages.map((message) => {
    if (message.role !== "tool") return message;
    const silent = (part: ToolContent[number]) =>
      part.type === "tool-result" && part.output.type === "error-text" && part.output.value.trim() === "";
    if (!message.content.some(silent)) return message;
    const content = message.content.map((part) =>
      silent(part) && part.type === "tool-result"
        ? { ...part, output: { type: "error-text" as const, value: SILENT_FAILURE } }
        : part,
    );
    return { ...message, content };
  });
}

/**
 * Characters of one tool result the model is sent, about 25k tokens (Claude Code's bound on an MCP tool's output).
 * A result may be megabytes (a file read whole, a command's output); sent whole it is past every model's context,
 * and since it stays in the conversation every later request, the summary that would compact it included, fails
 * the same way: the session could never take a turn again. The log keeps MAX_TOOL_RESULT_BYTES of it (as the harness
 * gets it); the file KEPT_RESULT_CHARS.
 */
export const MAX_RESULT_CHARS = 100_000;

/**
 * Characters of one tool result the conversation file keeps: its start and end, past the most of either a request
 * is sent (so requests are as from the whole result, but for the count of characters left out). Kept whole, two
 * results of a few tens of MB, which compaction never takes away (what is sent of them is small), put what
 * follows the last compaction past what is read at open: the session could not be opened again.
 */
export const KEPT_RESULT_CHARS = 10 * MAX_RESULT_CHARS;

/** A result past MAX_RESULT_CHARS as the model is sent it: its start and its end (where a command's error is). */
export function shortenedResult(value: string, max = MAX_RESULT_CHARS): string {
  if (value.length <= max) return value;
  const tail = Math.floor(max / 4);
  const head = max - tail;
  const omitted = value.length - head - tail;
  return `${value.slice(0, head)}\n\n[… ${omitted} characters of this tool result left out: it is too long for the model's context; ask for less, e.g. a range of lines …]\n\n${value.slice(-tail)}`;
}

/**
 * Characters of all the tool results of one answer the model is sent together. An answer may call 32 tools at
 * once, each result within MAX_RESULT_CHARS and all of them together still past the context.
 */
export const MAX_MESSAGE_RESULT_CHARS = 2 * MAX_RESULT_CHARS;

/**
 * How many characters each of results of these `lengths` may keep so that together they stay within `budget`
 * (and each within `max`): a fair share each, what a shorter result leaves over going to the longer ones.
 */
export function resultShares(lengths: number[], budget: number, max: number): number[] {
  const order = lengths.map((length, i) => ({ length, i })).sort((a, b) => a.length - b.length);
  const shares = new Array<number>(lengths.length);
  let left = budget;
  order.forEach(({ length, i }, at) => {
    const share = Math.min(max, Math.floor(left / (order.length - at)));
    shares[i] = Math.min(length, share);
    left -= shares[i]!;
  });
  return shares;
}

type TextResult = ToolContent[number] & {
  type: "tool-result";
  output: { type: "text" | "error-text"; value: string };
};
const isTextResult = (part: ToolContent[number]): part is TextResult =>
  part.type === "tool-result" && (part.output.type === "text" || part.output.type === "error-text");

/**
 * `messages` with every tool result's text within `max` characters, and the results of one message together
 * within `max` × MAX_MESSAGE_RESULT_CHARS / MAX_RESULT_CHARS; `messages` itself when all were.
 */
export function withBoundedResults(messages: ModelMessage[], max = MAX_RESULT_CHARS): ModelMessage[] {
  const budget = Math.floor((max * MAX_MESSAGE_RESULT_CHARS) / MAX_RESULT_CHARS);
  let changed = false;
  const out = messages.map((message) => {
    if (message.role !== "tool") return message;
    const texts = message.content.filter(isTextResult);
    const shares = resultShares(
      texts.map((part) => part.output.value.length),
      budget,
      max,
    );
    if (texts.every((part, i) => part.output.value.length <= shares[i]!)) return message;
    changed = true;
    const shareOf = new Map(texts.map((part, i) => [part, shares[i]!]));
    const content = message.content.map((part) => {
      const share = isTextResult(part) ? shareOf.get(part) : undefined;
      if (share === undefined || !isTextResult(part) || part.output.value.length <= share) return part;
      return {
        ...part,
        output: { type: part.output.type, value: shortenedResult(part.output.value, share) },
      };
    });
    return { ...message, content };
  });
  return changed ? out : messages;
}

/** A rough count of characters per token, for text no request has measured yet. */
const CHARS_PER_TOKEN = 4;

/**
 * An image as tokens, in characters: the providers bill an image by its pixels, about 1,600 tokens for the
 * largest they take whole (Anthropic: width × height / 750), not by the length of its base64.
 */
const IMAGE_CHARS = 1_600 * CHARS_PER_TOKEN;

/**
 * About how many characters of `message` a request carries: its tool results as bounded for the model (not as
 * kept whole in the file) and each image at IMAGE_CHARS. Counted by its bytes, a 5 MB screenshot or a 4 MB
 * file read looked like a million tokens, and compacted the conversation at once.
 */
function charsSent(message: ModelMessage): number {
  const sent = message.role === "tool" ? withBoundedResults([message])[0]! : message;
  let images = 0;
  const text = JSON.stringify(sent, (key, value) => {
    if (key !== "image" || typeof value !== "string") return value;
    images++;
    return "";
  });
  return text.length + images * IMAGE_CHARS;
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

  /**
   * Passive: reads the file, if any, and nothing else. `limit`: the bytes of its tail read at most (see
   * conversationReadLimit); a longer file must hold a compaction in them, and only what follows it is kept.
   */
  constructor(
    dir: string,
    limit = conversationReadLimit(0),
    /**
     * Keeps the session's secrets out of every entry appended: a prompt, a tool's call or result, the model's reply
     * or summary may repeat one, and a checkpoint of a file holding it is refused, as is every fork from then on.
     */
    private readonly redactor?: { redactDeep<T>(value: T): T },
  ) {
    this.path = join(dir, CONVERSATION_FILE);
    const file = readConversationFile(this.path, limit);
    if (!file) return;
    const { text, cut, size } = file;
    for (const line of text.split("\n")) {
      if (line === "") continue;
      try {
        this.entries.push(JSON.parse(line) as Entry);
      } catch {
        this.damaged.push(line.length > 80 ? `${line.slice(0, 80)}…` : line);
      }
    }
    if (cut) {
      const at = this.entries.findLastIndex((entry) => entry.type === "compaction");
      if (at < 0) throw tooLongError(this.path, size, limit);
      this.entries.splice(0, at);
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
    return answered(withBoundedResults(withWordedErrors(withoutBlankText(out))));
  }

  /**
   * About how many input tokens the next request holds: the last request's since the last compaction, and what
   * came after it at 4 characters a token. A turn that failed on what its tools returned (past the model's context)
   * measured nothing of it: counted from the last request alone, it would never be compacted, and every later
   * turn would fail the same way.
   */
  estimatedInputTokens(): number {
    let unmeasured = 0;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      if (entry.type === "compaction") break;
      if (entry.usage) return entry.usage.input + Math.ceil(unmeasured / CHARS_PER_TOKEN);
      unmeasured += charsSent(entry.message);
    }
    return Math.ceil(unmeasured / CHARS_PER_TOKEN);
  }

  get length(): number {
    return this.entries.length;
  }

  /**
   * Appends in order; resolves once the entries are written and flushed to the OS. Entries that could not be written
   * (a full disk) are left out of the conversation as they are out of the file, and the file is opened again for the
   * next append: the next request is still the file's, and a disk with room again takes the next turn.
   */
  append(...given: Entry[]): Promise<void> {
    // Redacted in memory too: the next request is the one a fresh open of the file would send.
    const entries = this.redactor ? given.map((entry) => this.redactor!.redactDeep(entry)) : given;
    this.entries.push(...entries);
    const lines = entries.map((e) => encodeLine(e)).join("");
    return this.queue(async () => {
      const text = (this.pendingNewline ? "\n" : "") + lines;
      this.pendingNewline = false;
      try {
        await this.write(text);
      } catch (err) {
        for (const entry of entries) {
          const at = this.entries.lastIndexOf(entry);
          if (at >= 0) this.entries.splice(at, 1);
        }
        // A write cut short may have left part of a line: the next entry starts a line of its own.
        this.pendingNewline = true;
        const file = this.file;
        this.file = undefined;
        await file?.close().catch(() => {});
        throw err;
      }
    });
  }

  /** Opens the file for appending, if it is not open yet: a file that cannot be written fails before a request. */
  writable(): Promise<void> {
    return this.queue(async () => {
      this.file ??= await open(this.path, "a");
    });
  }

  /** Runs `task` after every write queued before it, whether or not they failed: one failure must not fail all later. */
  private queue(task: () => Promise<void>): Promise<void> {
    const run = this.writing.catch(() => {}).then(task);
    this.writing = run;
    return run;
  }

  /** Waits for every append so far and makes it durable (one fdatasync), as the end of a turn should. */
  async sync(): Promise<void> {
    await this.writing;
    await this.file?.datasync();
  }

  async checkpoint(): Promise<NativeFile[]> {
    // An append that failed is in neither the file nor the conversation: the file as it is, is the checkpoint.
    await this.writing.catch(() => {});
    if (!existsSync(this.path)) return [];
    return [{ path: CONVERSATION_FILE, size: statSync(this.path).size, append_only: true }];
  }

  async close(): Promise<void> {
    await this.writing.catch(() => {});
    const file = this.file;
    this.file = undefined;
    await file?.close();
  }

  /**
   * write(2) may take less than it is given and say so without an error (a disk that fills midway): the rest is
   * written until it is all there, or the write fails (ENOSPC) and the append is undone as a failed one.
   */
  private async write(text: string): Promise<void> {
    this.file ??= await open(this.path, "a");
    const bytes = Buffer.from(text);
    for (let done = 0; done < bytes.length; ) {
      done += (await this.file.write(bytes, done, bytes.length - done)).bytesWritten;
    }
  }
}
