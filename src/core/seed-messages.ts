// A neutral transcript as the alternating messages every model API wants (user; assistant with text and tool
// calls; the calls' results), the shape each family's seeder maps to its own file format. Tool calls the target
// cannot make (another family's built-ins) become text in the assistant's message, with their results, so the
// model reads what happened instead of seeing calls it would try to repeat.
import type { SessionConfig } from "../protocol/runner.js";
import { answeredOnly, type Transcript } from "./transcript.js";

/** What a family seeds its native state from: Brain's log of the conversation, in no family's format. */
export interface SeedInput {
  /** The session's native dir, empty. */
  dir: string;
  /** The session's config (its model, system prompt, bound tools, options such as cwd). */
  config: SessionConfig;
  transcript: Transcript;
  /**
   * The conversation ran on this same family (a rebuild): its tool calls stay calls. From another family,
   * calls to tools this one lacks are carried as text.
   */
  sameFamily: boolean;
}

/** A family's way to write its native state from a transcript (FamilyDescriptor.seed). */
export type Seeder = (input: SeedInput) => Promise<void>;

export type SeedPart =
  | { type: "text"; text: string }
  | { type: "call"; id: string; name: string; arguments: Record<string, unknown> };

export type SeedMessage =
  | { role: "user"; text: string }
  | { role: "assistant"; parts: SeedPart[] }
  | { role: "tool"; results: { id: string; name: string; text: string; is_error: boolean }[] };

export interface SeedOptions {
  /** Whether the target can call this tool itself: kept as a call when so, carried as text when not. */
  native(name: string): boolean;
}

/** What a result reads like when it was lost (the turn ended before it came). */
const NO_RESULT = "no result: the turn ended before the tool finished";

export function seedMessages(transcript: Transcript, options: SeedOptions): SeedMessage[] {
  const out: SeedMessage[] = [];
  /** Native calls still waiting for results: nothing else may come between a call and its result. */
  let waiting: { id: string; name: string }[] = [];
  let results: Extract<SeedMessage, { role: "tool" }>["results"] = [];
  let held: string[] = [];
  const textCalls = new Map<string, string>();

  const assistant = (): SeedPart[] => {
    const last = out.at(-1);
    if (last?.role === "assistant") return last.parts;
    const parts: SeedPart[] = [];
    out.push({ role: "assistant", parts });
    return parts;
  };
  const addText = (text: string) => {
    const parts = assistant();
    const last = parts.at(-1);
    if (last?.type === "text") last.text += `\n\n${text}`;
    else parts.push({ type: "text", text });
  };
  /** Ends the open calls: their results (a lost one says so), then any user text held back meanwhile. */
  const settle = () => {
    if (waiting.length > 0) {
      // In the order of the calls, not the order they finished in (the log's): a provider that pairs results with
      // calls by position (Ollama, Gemini, whose calls have no ids) would give a call another's result.
      const ordered = waiting.map(
        (call) =>
          results.find((r) => r.id === call.id) ?? {
            id: call.id,
            name: call.name,
            text: NO_RESULT,
            is_error: true,
          },
      );
      out.push({ role: "tool", results: ordered });
    }
    waiting = [];
    results = [];
    for (const text of held) out.push({ role: "user", text });
    held = [];
  };

  for (const item of answeredOnly(transcript).items) {
    switch (item.kind) {
      case "user":
      case "steer": {
        const text =
          item.kind === "user" && item.images
            ? `${item.text}\n\n[${item.images} image(s) not carried over]`
            : item.text;
        if (waiting.length > 0) held.push(text);
        else out.push({ role: "user", text });
        break;
      }
      case "assistant":
        // Text logged while the step's calls wait for results belongs to that step, before its calls.
        if (waiting.length > 0 && results.length === 0 && out.at(-1)?.role === "assistant") {
          const parts = assistant();
          parts.splice(
            parts.findIndex((p) => p.type === "call"),
            0,
            { type: "text", text: item.text },
          );
        } else {
          settle();
          addText(item.text);
        }
        break;
      case "tool_call":
        if (options.native(item.name)) {
          // Ids are unique only within one harness's run (a runner's `call_1` comes again after a restart, or
          // on another family): a native call's id no longer names an earlier call carried as text.
          textCalls.delete(item.id);
          if (waiting.length === 0 || out.at(-1)?.role !== "assistant") settle();
          assistant().push({ type: "call", id: item.id, name: item.name, arguments: item.arguments });
          waiting.push({ id: item.id, name: item.name });
        } else {
          settle();
          textCalls.set(item.id, item.name);
          addText(`[Called tool ${item.name} with ${JSON.stringify(item.arguments)}]`);
        }
        break;
      case "tool_result":
        if (waiting.some((c) => c.id === item.id)) {
          results.push({ id: item.id, name: item.name, text: item.text, is_error: item.is_error });
          if (results.length === waiting.length) settle();
        } else if (textCalls.has(item.id)) {
          textCalls.delete(item.id);
          settle();
          addText(`[Tool ${item.name} ${item.is_error ? "failed" : "returned"}: ${item.text}]`);
        }
        break;
      case "turn_end":
        settle();
        if (item.status === "interrupted") addText("[The user interrupted this turn.]");
        break;
      case "compaction":
        // The whole conversation is carried, so the summary it was replaced by is not needed.
        break;
    }
  }
  settle();
  return out;
}
