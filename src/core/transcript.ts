// A session's conversation as Brain's log records it, in no family's format: what verifies that a reopened
// harness still holds its history, and what seeds another family (a handoff) or the same one (a rebuild) with
// it. Every family logs its turns in the same events, so this one function serves them all.
import type { SessionEvent } from "../protocol/events.js";

export type TranscriptItem =
  /** A prompt that started a turn. */
  | { kind: "user"; turn: string; text: string; images?: number }
  /** A steering message, where it joined the running turn. */
  | { kind: "steer"; turn: string; text: string }
  | { kind: "assistant"; turn: string; text: string }
  /** A tool call by the name the harness that made it used (a CLI's own tool, or a bound tool). */
  | { kind: "tool_call"; turn: string; id: string; name: string; arguments: Record<string, unknown> }
  | { kind: "tool_result"; turn: string; id: string; name: string; text: string; is_error: boolean }
  /** A summary a harness compacted its context into: it stood for everything before it from then on. */
  | { kind: "compaction"; turn?: string; summary: string }
  /** The turn ended early: interrupted by a user, or failed (with what failed). */
  | { kind: "turn_end"; turn: string; status: "interrupted" | "failed"; error?: string };

export interface Transcript {
  /** The harness the conversation ran on (the last `session.opened`). */
  harness?: string;
  model?: string;
  system_prompt?: string;
  items: TranscriptItem[];
}

/** The turns that reached the model and came back: what a harness's native state must hold. */
export interface HeldTurns {
  /** How many prompts the model answered (with text or a tool call). */
  turns: number;
  /** The text of the last such prompt: a native transcript that holds the conversation holds it. */
  lastPrompt?: string;
  /** The text of the last such prompt whose turn did not fail. */
  lastKept?: string;
}

/**
 * The conversation in a session's events, in log order. Deltas count only where no `assistant.message` follows
 * them (it carries their whole text); a tool result is named by its call; an interrupted or failed turn ends
 * with a `turn_end`.
 */
export function transcriptOf(events: readonly SessionEvent[]): Transcript {
  const out: Transcript = { items: [] };
  const names = new Map<string, string>();
  // Text streamed before a tool call is logged only as deltas by some harnesses (no assistant.message for a
  // step that ends in calls): kept, and flushed as assistant text when anything else comes first.
  let streamed = "";
  let streamedTurn = "";
  /** Text just flushed from deltas: an assistant.message repeating it (logged after the calls) is the same text. */
  let flushed: string | undefined;
  for (const event of events) {
    const turn = event.turn ?? "";
    if (event.type === "assistant.delta") {
      streamed += (event.data as { text: string }).text;
      streamedTurn = turn;
      continue;
    }
    if (event.type === "assistant.message") {
      const { text } = event.data as { text: string };
      const repeats = streamed === "" && flushed !== undefined && text === flushed;
      streamed = "";
      flushed = undefined;
      if (repeats) continue;
    }
    if (streamed !== "") {
      out.items.push({ kind: "assistant", turn: streamedTurn, text: streamed });
      flushed = streamed;
      streamed = "";
    }
    switch (event.type) {
      case "session.opened": {
        const { harness, config } = event.data as { harness: string; config: Transcript & object };
        out.harness = harness;
        if (config.model) out.model = config.model;
        if (config.system_prompt) out.system_prompt = config.system_prompt;
        break;
      }
      case "user.prompt": {
        const { text, images } = event.data as { text: string; images?: unknown[] };
        out.items.push({ kind: "user", turn, text, ...(images?.length ? { images: images.length } : {}) });
        break;
      }
      case "user.steer":
        out.items.push({ kind: "steer", turn, text: (event.data as { text: string }).text });
        break;
      case "assistant.message": {
        const { text } = event.data as { text: string };
        if (text !== "") out.items.push({ kind: "assistant", turn, text });
        break;
      }
      case "tool.call": {
        const call = event.data as { id: string; name: string; arguments: Record<string, unknown> };
        names.set(call.id, call.name);
        out.items.push({ kind: "tool_call", turn, ...call });
        break;
      }
      case "tool.result": {
        const result = event.data as { id: string; content: { text: string }[]; is_error: boolean };
        const text = result.content.map((c) => c.text).join("\n");
        const name = names.get(result.id) ?? "";
        out.items.push({ kind: "tool_result", turn, id: result.id, name, text, is_error: result.is_error });
        break;
      }
      case "context.compacted":
        out.items.push({
          kind: "compaction",
          ...(event.turn ? { turn } : {}),
          summary: (event.data as { summary: string }).summary,
        });
        break;
      case "turn.settled": {
        const { status, error } = event.data as { status: string; error?: { message: string } };
        if (status === "interrupted" || status === "failed") {
          out.items.push({
            kind: "turn_end",
            turn,
            status,
            ...(error ? { error: error.message } : {}),
          });
        }
        break;
      }
    }
  }
  if (streamed !== "") out.items.push({ kind: "assistant", turn: streamedTurn, text: streamed });
  return out;
}

/**
 * The transcript without the turns that failed before the model answered anything (a refused request, a harness
 * that would not start): they are not part of the conversation the model saw.
 */
export function answeredOnly(transcript: Transcript): Transcript {
  const answered = new Set<string>();
  const failed = new Set<string>();
  for (const item of transcript.items) {
    if (item.kind === "assistant" || item.kind === "tool_call") answered.add(item.turn ?? "");
    if (item.kind === "turn_end" && item.status === "failed") failed.add(item.turn);
  }
  const drop = (turn: string | undefined) => turn !== undefined && failed.has(turn) && !answered.has(turn);
  return { ...transcript, items: transcript.items.filter((item) => !drop(item.turn)) };
}

/** The prompts of a transcript the model answered: the turns a harness that ran them has recorded. */
export function heldTurns(transcript: Transcript): HeldTurns {
  const prompts = new Map<string, string>();
  const answered = new Set<string>();
  const failed = new Set<string>();
  for (const item of transcript.items) {
    if (item.kind === "user") prompts.set(item.turn, item.text);
    if ((item.kind === "assistant" || item.kind === "tool_call") && prompts.has(item.turn)) {
      answered.add(item.turn);
    }
    if (item.kind === "turn_end" && item.status === "failed") failed.add(item.turn);
  }
  let lastPrompt: string | undefined;
  let lastKept: string | undefined;
  for (const [turn, text] of prompts) {
    if (!answered.has(turn)) continue;
    lastPrompt = text;
    if (!failed.has(turn)) lastKept = text;
  }
  return {
    turns: answered.size,
    ...(lastPrompt !== undefined ? { lastPrompt } : {}),
    ...(lastKept !== undefined ? { lastKept } : {}),
  };
}

/** Events up to and including the first that `stop` matches (all of them when none does). */
export function eventsUpTo(
  events: readonly SessionEvent[],
  stop: (e: SessionEvent) => boolean,
): SessionEvent[] {
  const end = events.findIndex(stop);
  return end < 0 ? [...events] : events.slice(0, end + 1);
}

/**
 * The transcript as plain text, for a harness whose native format Brain cannot write: put in its first prompt,
 * clearly marked as history so the model does not take it for a new request.
 */
export function transcriptAsText(transcript: Transcript): string {
  const lines: string[] = [];
  for (const item of answeredOnly(transcript).items) {
    switch (item.kind) {
      case "user":
        lines.push(`User: ${item.text}`);
        break;
      case "steer":
        lines.push(`User (while the assistant was working): ${item.text}`);
        break;
      case "assistant":
        lines.push(`Assistant: ${item.text}`);
        break;
      case "tool_call":
        lines.push(`Assistant called tool ${item.name} with ${JSON.stringify(item.arguments)}`);
        break;
      case "tool_result":
        lines.push(`Tool ${item.name || item.id} ${item.is_error ? "failed" : "returned"}: ${item.text}`);
        break;
      case "compaction":
        lines.push(`(Summary of the conversation before this point: ${item.summary})`);
        break;
      case "turn_end":
        lines.push(`(That turn was ${item.status}${item.error ? `: ${item.error}` : ""}.)`);
        break;
    }
  }
  return lines.join("\n\n");
}

/** How an earlier conversation is put before a first prompt, marked so it reads as history. */
export function historyPreamble(transcript: Transcript, prompt: string): string {
  return [
    "[Conversation history, carried over from an earlier session. It is context only: do not redo its tool calls.]",
    transcriptAsText(transcript),
    "[End of the conversation history. The new message follows.]",
    prompt,
  ].join("\n\n");
}
