// session/load's replay: the session's log, preceded by the conversation it came from. A fork or a handoff opens a
// log of its own whose session.opened names its origin (as conversation-chain reads it for the daemon); an
// editor loading it expects the whole conversation, as the model has it, not only what was said since.
import type { BrainClient } from "../client/client.js";
import { ClientError } from "../client/errors.js";
import { isParentOf } from "../core/conversation-chain.js";
import type { SessionEvent } from "../protocol/events.js";

/** Forks and handoffs nest; a cycle cannot be made, but a damaged store must not send the replay round forever. */
const MAX_DEPTH = 64;
const PAGE = 1000;

/** Where an origin's events stop: a fork at its checkpoint, a handoff at the seq it was handed off at. */
type Cut = { checkpoint: string } | { seq: number } | undefined;

/** Every event of the session's conversation, oldest first, each handed to `emit` in turn. */
export function replayConversation(
  client: BrainClient,
  sessionId: string,
  emit: (event: SessionEvent) => Promise<void>,
): Promise<void> {
  return replay(client, sessionId, undefined, emit, 0).then(() => undefined);
}

/** True once the cut was reached. */
async function replay(
  client: BrainClient,
  id: string,
  cut: Cut,
  emit: (event: SessionEvent) => Promise<void>,
  depth: number,
): Promise<boolean> {
  const last = (await client.log(id, 0, 1)).last_seq;
  for (let after = 0; after < last; ) {
    const page = await client.log(id, after, PAGE);
    if (page.events.length === 0) break;
    for (const event of page.events) {
      if (cut && "seq" in cut && event.seq > cut.seq) return true;
      if (event.type === "session.opened" && depth < MAX_DEPTH)
        await replayOrigin(client, event, emit, depth);
      await emit(event);
      if (
        cut &&
        "checkpoint" in cut &&
        event.type === "checkpoint.created" &&
        event.data.id === cut.checkpoint
      )
        return true;
    }
    after = page.events.at(-1)!.seq;
  }
  return false;
}

async function replayOrigin(
  client: BrainClient,
  opened: Extract<SessionEvent, { type: "session.opened" }>,
  emit: (event: SessionEvent) => Promise<void>,
  depth: number,
): Promise<void> {
  const { forked_from, handoff_from } = opened.data;
  const origin = forked_from
    ? { id: forked_from.session, cut: { checkpoint: forked_from.checkpoint } }
    : handoff_from
      ? { id: handoff_from.session, cut: { seq: handoff_from.seq } }
      : undefined;
  if (!origin) return;
  try {
    // A session made after this one under its deleted origin's id (a client-chosen id) is not its origin.
    if (!isParentOf(await client.session(origin.id), { created_at: opened.ts })) return;
    await replay(client, origin.id, origin.cut, emit, depth + 1);
  } catch (err) {
    // An origin since deleted (or, in a damaged store, of another tenant: the daemon answers 404 for it) leaves
    // the replay with what this session's own log holds.
    if (!(err instanceof ClientError && err.status === 404)) throw err;
  }
}
