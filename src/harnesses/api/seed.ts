// Seeds the api harness from a neutral transcript (a handoff or rebuild): writes conversation.jsonl as the
// harness itself would have, so its next request carries the history as AI SDK messages.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ModelMessage } from "ai";
import { type SeedMessage, seedMessages } from "../../core/seed-messages.js";
import { encodeLine } from "../../protocol/ndjson.js";
import type { SeedInput } from "../family.js";
import { CONVERSATION_FILE, type Entry } from "./conversation.js";

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
            : { type: "tool-call" as const, toolCallId: part.id, toolName: part.name, input: part.arguments },
        ),
      };
    case "tool":
      return {
        role: "tool",
        content: message.results.map((r) => ({
          type: "tool-result" as const,
          toolCallId: r.id,
          toolName: r.name,
          output: r.is_error
            ? { type: "error-text" as const, value: r.text }
            : { type: "text" as const, value: r.text },
        })),
      };
  }
}

export async function seedApi(input: SeedInput): Promise<void> {
  const bound = new Set(input.config.tools ?? []);
  const messages = seedMessages(input.transcript, { native: (name) => input.sameFamily || bound.has(name) });
  const entries: Entry[] = messages.map((m) => ({ type: "message", message: toModelMessage(m) }));
  await writeFile(join(input.dir, CONVERSATION_FILE), entries.map((e) => encodeLine(e)).join(""), {
    flag: "wx",
  });
}
