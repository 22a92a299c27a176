// Moving a conversation between harnesses through Brain's log: a handoff starts a new session on another family
// (or the same one) seeded with the whole conversation; a rebuild rewrites a session's own native state from its
// log when the harness lost it. Families that can write their native format do (FamilyDescriptor.seed); the
// others get the history as a marked summary in the first prompt, and the session record says which it was.
import { basename } from "node:path";
import type { SessionEvent } from "../protocol/events.js";
import type { SessionConfig } from "../protocol/runner.js";
import type { SessionRecord } from "../protocol/session.js";
import { ancestorEvents, readConversation } from "./conversation-chain.js";
import { SessionError } from "./errors.js";
import type { ClientOptions } from "./harness.js";
import type { HarnessRegistry } from "./registry.js";
import type { Seeder } from "./seed-messages.js";
import type { Session } from "./session.js";
import type { InputLayers, NewSessionInput, SessionLayer } from "./session-input.js";
import type { SessionStore } from "./store.js";
import { heldTurns, historyPreamble, type Transcript, transcriptOf } from "./transcript.js";

export interface HandoffOptions {
  /** The harness (family) the conversation moves to. */
  to: string;
  /** The model on the new harness; the source's when absent. */
  model?: string;
  /** The new session's id and the key of the request that made it (a keyed handoff: src/server/keyed-creates.ts). */
  made?: Made;
}

/** A new session's id and the Idempotency-Key of the request that made it, when the request was keyed. */
export type Made = Pick<NewSessionInput, "id" | "idempotency">;

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
 * The new session's settings, split by who could have chosen them in the source, so that a handoff asked for
 * over the network passes the checks a create would: `operator` holds what only the operator sets (and what the
 * source's create already vetted for its family), `call` what any caller may. The prompt, model, bound tools
 * and a named provider are the caller's. The permission policy keeps its two layers: the operator's, and the
 * client's that only tightens it (resolve them with `callPermissionsTighten`). The tool mode moves as the caller's: "bound" always may,
 * "native" only where the operator's limits allow it. Options are family-specific: on the same family they all
 * move, as the source's create vetted them; on another family only the working directory does (the agent's files
 * are there), the operator's when the source's family lets only the operator set it, else the caller's.
 */
export function handoffLayers(
  source: SessionRecord,
  options: HandoffOptions,
  /** The options clients may set on the source's family: "any" when that family is not known here. */
  sourceClientOptions: ClientOptions | undefined,
): { operator: SessionLayer; call: NonNullable<InputLayers["call"]> } {
  const { model, system_prompt, tools, tool_mode, options: sourceOptions } = source.config;
  const { provider, permissions, client_permissions, mcp_servers } = source;
  const chosen = options.model ?? model;
  const operator: SessionLayer = {
    ...(typeof provider === "object" ? { provider } : {}),
    ...(mcp_servers ? { mcp_servers } : {}),
    ...(permissions ? { permissions } : {}),
  };
  const config: SessionConfig = {
    ...(chosen ? { model: chosen } : {}),
    ...(system_prompt ? { system_prompt } : {}),
    ...(tools ? { tools } : {}),
  };
  const call: NonNullable<InputLayers["call"]> = {
    harness: options.to,
    ...(source.tenant ? { tenant: source.tenant } : {}),
    ...options.made,
    // The editor's project goes on with the conversation: session/list in that directory shows the new session.
    ...(source.editor_cwd ? { editor_cwd: source.editor_cwd } : {}),
    config,
    ...(typeof provider === "string" ? { provider } : {}),
    ...(client_permissions ? { permissions: client_permissions } : {}),
  };
  if (options.to === source.harness) {
    operator.config = {
      ...(tool_mode ? { tool_mode } : {}),
      ...(sourceOptions ? { options: sourceOptions } : {}),
    };
    return { operator, call };
  }
  if (tool_mode) config.tool_mode = tool_mode;
  const cwd = sourceOptions?.cwd;
  if (cwd === undefined) return { operator, call };
  if (sourceClientOptions === "any" || sourceClientOptions?.includes("cwd")) config.options = { cwd };
  else operator.config = { options: { cwd } };
  return { operator, call };
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

/** What a fork keeps of its source's record: editor_cwd too, so it stays in its editor's session/list (brain acp). */
export function forkInput(source: SessionRecord) {
  const { harness, config, provider, permissions, client_permissions, tenant, mcp_servers, editor_cwd } =
    source;
  return { harness, config, provider, permissions, client_permissions, tenant, mcp_servers, editor_cwd };
}

/**
 * How a fork of `source` from `checkpoint` starts when a copy of the checkpoint is not the conversation: a
 * summary of the history up to the checkpoint in its first prompt. So when the agent keeps the conversation on
 * its side (HarnessFactory.agentSide): a new agent conversation, the parent's agent id left behind (the agent's
 * own fork, ACP's session/fork, is not asked: unstable in ACP, in no nui protocol, and the log is the
 * conversation of record anyway). And when the source was seeded with a summary no answered prompt had carried
 * yet at the checkpoint: that history is in no native file. Undefined when a copy of the checkpoint will do.
 */
export async function forkSeeding(
  { harnesses, store }: { harnesses: HarnessRegistry; store: Pick<SessionStore, "readEvents" | "paths"> },
  source: SessionRecord,
  checkpoint: string,
): Promise<Seeded | undefined> {
  if (!harnesses.names().includes(source.harness)) return undefined; // refused by the create, naming it
  const native = store.paths(source.id).native;
  if (await harnesses.get(source.harness).agentSide?.(source.config, native))
    return { how: "summary", seq: 0 };
  const seeded = source.seeded;
  if (seeded?.how !== "summary") return undefined;
  const read = (after: number, limit: number) => store.readEvents(source.id, { after, limit });
  const held = await readConversation(read, { after: seeded.seq, end: { checkpoint } });
  return heldTurns(transcriptOf(held)).lastPrompt === undefined ? { how: "summary", seq: 0 } : undefined;
}

/**
 * A rebuild's session.recovered: what it did and the key it ran under, from which a retry under the key is answered
 * on any node (src/server/native-state.ts). The folder kept aside (./rebuild-aside.ts) is named relative to the session's directory.
 */
export function rebuiltData(seeded: Seeded, aside: string, key: string | undefined) {
  const how = seeded.how === "native" ? "in the harness's own format" : "as a summary in the next prompt";
  // The log is the tenant's to read: the folder's name in the session's directory, not the daemon's path to it.
  const reason = `native state rebuilt from Brain's log (${how}); the native state from before its first rebuild is kept in ${basename(aside)}, in the session's directory`;
  return {
    reason,
    rebuilt: { seeded, aside: basename(aside) },
    ...(key === undefined ? {} : { idempotency_key: key }),
  };
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
