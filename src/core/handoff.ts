// Moving a conversation between harnesses through Brain's log: a handoff starts a new session on another family
// (or the same one) seeded with the whole conversation; a rebuild rewrites a session's own native state from its
// log when the harness lost it. Families that can write their native format do (FamilyDescriptor.seed); the
// others get the history as a marked summary in the first prompt, and the session record says which it was.
import { mkdir, readdir, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { SessionEvent } from "../protocol/events.js";
import type { SessionConfig } from "../protocol/runner.js";
import type { SessionRecord } from "../protocol/session.js";
import { ancestorEvents } from "./conversation-chain.js";
import { SessionError } from "./errors.js";
import type { Seeder } from "./seed-messages.js";
import type { Session } from "./session.js";
import type { SessionStore } from "./store.js";
import { heldTurns, historyPreamble, type Transcript, transcriptOf } from "./transcript.js";

export interface HandoffOptions {
  /** The harness (family) the conversation moves to. */
  to: string;
  /** The model on the new harness; the source's when absent. */
  model?: string;
}

/** How a session was seeded, for its record. */
export type Seeded = NonNullable<SessionRecord["seeded"]>;

/** Every event of the conversation up to now: the sessions it came from, then its own. */
export async function conversationEvents(
  store: Pick<SessionStore, "get" | "readEvents">,
  record: SessionRecord,
  own: SessionEvent[],
): Promise<SessionEvent[]> {
  return [...(await ancestorEvents(store, record)), ...own];
}

/** Whether every harness the conversation ran on is `harness`: then its tool calls are that family's own. */
export function ranOnlyOn(events: SessionEvent[], harness: string): boolean {
  return events
    .filter((e) => e.type === "session.opened")
    .every((e) => (e.data as { harness: string }).harness === harness);
}

/**
 * The new session's config: the source's prompt and bound tools; its options only on the same family (they are
 * family-specific), except the working directory, which the agent's files are in.
 */
export function handoffConfig(source: SessionRecord, options: HandoffOptions): SessionConfig {
  const { model, system_prompt, tools, options: sourceOptions } = source.config;
  const same = options.to === source.harness;
  const chosen = options.model ?? model;
  const cwd = sourceOptions?.cwd;
  const carried = same ? sourceOptions : cwd !== undefined ? { cwd } : undefined;
  return {
    ...(chosen ? { model: chosen } : {}),
    ...(system_prompt ? { system_prompt } : {}),
    ...(tools ? { tools } : {}),
    ...(carried ? { options: carried } : {}),
  };
}

/** Writes the family's native state, or says the history goes as a summary; `seq` is where the seeding stands. */
export async function seedNative(
  seeder: Seeder | undefined,
  input: { dir: string; config: SessionConfig; transcript: Transcript; sameFamily: boolean },
  seq: number,
): Promise<Seeded> {
  if (!seeder) return { how: "summary", seq };
  await seeder(input);
  return { how: "native", seq };
}

/**
 * Moves a native dir's files aside (into the session's dir, kept for inspection) before a rebuild; the agent's
 * working tree (`work`) stays where it is.
 */
export async function setAside(native: string): Promise<string> {
  const aside = join(
    dirname(native),
    `native-before-rebuild-${new Date().toISOString().replace(/[:.]/g, "-")}`,
  );
  await mkdir(aside, { recursive: true });
  for (const name of await readdir(native)) {
    if (name !== "work") await rename(join(native, name), join(aside, name));
  }
  return aside;
}

/**
 * For a session seeded with a summary: the first prompt (until a turn is answered after the seeding) carries the
 * conversation before it, marked as history. Undefined otherwise.
 */
export function summaryPreamble(
  record: SessionRecord,
):
  | ((text: string, own: SessionEvent[], ancestors: () => Promise<SessionEvent[]>) => Promise<string>)
  | undefined {
  const seeded = record.seeded;
  if (seeded?.how !== "summary") return undefined;
  return async (text, own, ancestors) => {
    const after = own.filter((e) => e.seq > seeded.seq);
    if (heldTurns(transcriptOf(after)).lastPrompt !== undefined) return text;
    const before = [...(await ancestors()), ...own.filter((e) => e.seq <= seeded.seq)];
    return historyPreamble(transcriptOf(before), text);
  };
}

/** The summary preamble of a summary-seeded session, as a Session part ({} for any other session). */
export function summaryOption(record: SessionRecord, ancestors: () => Promise<SessionEvent[]>) {
  const preamble = summaryPreamble(record);
  if (!preamble) return {};
  return { preamble: (text: string, own: SessionEvent[]) => preamble(text, own, ancestors) };
}

/** The caller's field is `to`, not `harness`: an unknown one is refused naming the harnesses there are. */
export function requireHarness(known: string[], to: string): void {
  if (!known.includes(to)) {
    throw new SessionError("bad_request", `unknown harness "${to}"; known harnesses: ${known.join(", ")}`);
  }
}

export function refuseRunning(session: Session | undefined, what: string): void {
  if (session?.activeTurn) {
    throw new SessionError(
      "conflict",
      `turn ${session.activeTurn} is still running: wait for it before a ${what}`,
    );
  }
}
