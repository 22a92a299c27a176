// Seeds the api harness from a neutral transcript (a handoff or rebuild): writes conversation.jsonl as the
// harness itself would have, so its next request carries the history as AI SDK messages.
import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ModelMessage } from "ai";
import { type SeedMessage, seedMessages } from "../../core/seed-messages.js";
import type { Transcript } from "../../core/transcript.js";
import { encodeLine } from "../../protocol/ndjson.js";
import type { SeedInput } from "../family.js";
import { CONVERSATION_FILE, type Entry } from "./conversation.js";

/** A call id every provider takes back: Anthropic's pattern, and Chat Completions' 40 characters at most. */
const WIRE_ID = /^[A-Za-z0-9_-]{1,40}$/;

/**
 * The call's id as the next request sends it. Ids come from whichever provider or family made the call (Kimi's
 * "functions.echo:0", pi's "call_1|fc_1"); Anthropic refuses a request holding any other id, and the seeded file is
 * sent with every later request. Another id is made safe and told apart from the others by a hash of it; the call
 * and its result get the same one.
 */
function wireId(id: string): string {
  if (WIRE_ID.test(id)) return id;
  const hash = createHash("sha256").update(id).digest("hex").slice(0, 8);
  return `${id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 31)}_${hash}`;
}

function toModelMessage(message: SeedMessage): ModelMessage {
  switch (message.role) {
    case "user":
      return { role: "user", content: message.text };
    case "assistant":
      return {
        role: "assistant",
        content: message.parts.map((part) =>
          part.type === "text"
            ? { type: "text" as const, text: part.text }
            : {
                type: "tool-call" as const,
                toolCallId: wireId(part.id),
                toolName: part.name,
                input: part.arguments,
              },
        ),
      };
    case "tool":
      return {
        role: "tool",
        content: message.results.map((r) => ({
          type: "tool-result" as const,
          toolCallId: wireId(r.id),
          toolName: r.name,
          output: r.is_error
            ? { type: "error-text" as const, value: r.text }
            : { type: "text" as const, value: r.text },
        })),
      };
  }
}

/**
 * The transcript cut at its last compaction, as the harness's own file is: what came before (kept, as the file
 * keeps it, though no request sends it), the summary, and what the model saw after it. The prompt of the turn that
 * compacted was logged before its summary was made, but follows the summary in the conversation.
 */
function atLastCompaction(transcript: Transcript): {
  before: Transcript;
  summary?: string;
  after: Transcript;
} {
  const items = transcript.items;
  const at = items.findLastIndex((item) => item.kind === "compaction");
  const compaction = items[at];
  if (compaction?.kind !== "compaction") return { before: transcript, after: { ...transcript, items: [] } };
  const ofItsTurn = (item: (typeof items)[number]) =>
    compaction.turn !== undefined && item.turn === compaction.turn;
  return {
    before: { ...transcript, items: items.slice(0, at).filter((item) => !ofItsTurn(item)) },
    summary: compaction.summary,
    after: { ...transcript, items: [...items.slice(0, at).filter(ofItsTurn), ...items.slice(at + 1)] },
  };
}

export async function seedApi(input: SeedInput): Promise<void> {
  const bound = new Set(input.config.tools ?? []);
  const native = (name: string) => input.sameFamily || bound.has(name);
  const entries = (transcript: Transcript): Entry[] =>
    seedMessages(transcript, { native }).map((m) => ({ type: "message", message: toModelMessage(m) }));
  // A conversation the model summarised goes on from the summary, as it did before: carried whole, it could be past
  // the model's context, and with no request's usage in the file yet, nothing would compact it again.
  const { before, summary, after } = atLastCompaction(input.transcript);
  const all: Entry[] = [
    ...entries(before),
    ...(summary === undefined ? [] : [{ type: "compaction" as const, summary }]),
    ...entries(after),
  ];
  await writeFile(join(input.dir, CONVERSATION_FILE), all.map((e) => encodeLine(e)).join(""), {
    flag: "wx",
  });
}
