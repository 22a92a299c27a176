// session/load's replay: the session's log, preceded by the conversation it came from. A fork or a handoff opens a
// log of its own; its record names its origin (as conversation-chain reads it for the daemon); an editor loading it
// expects the whole conversation, as the model has it, not only what was said since.
import type { BrainClient } from "../client/client.js";
import { ClientError } from "../client/errors.js";
import { isParentOf } from "../core/conversation-chain.js";
import type { SessionView } from "../protocol/api.js";
import type { SessionEvent } from "../protocol/events.js";

/** Forks and handoffs nest; a cycle cannot be made, but a damaged store must not send the replay round forever. */
const MAX_DEPTH = 64;
const PAGE = 1000;

/** Where an origin's events stop: a fork at its checkpoint, a handoff at the seq it was handed off at. */
type Cut = { checkpoint: string } | { seq: number } | undefined;
type Emit = (event: SessionEvent) => Promise<void>;

/** Every event of the session's conversation, oldest first, each handed to `emit` in turn. */
export function replayConversation(client: BrainClient, session: SessionView, emit: Emit): Promise<void> {
  return replay(client, session, undefined, emit, 0);
}

async function replay(
  client: BrainClient,
  session: SessionView,
  cut: Cut,
  emit: Emit,
  depth: number,
): Promise<void> {
  // The origin from the session's record, not its log's session.opened: retention drops a log's oldest events
  // first, and with them went the whole conversation before the fork or handoff.
  if (depth < MAX_DEPTH) await replayOrigin(client, session, emit, depth);
  const head = await client.log(session.id, 0, 1);
  let until = cut && "seq" in cut ? cut.seq : undefined;
  if (cut && "checkpoint" in cut && (head.first_seq ?? 1) > 1) {
    // A fork's checkpoint in a log whose oldest events were dropped: when it went with them, every event kept
    // came after the fork and is no part of its conversation (they were all replayed as if they were).
    until = (await checkpointSeq(client, session.id, cut.checkpoint, head.last_seq)) ?? 0;
  }
  for (let after = 0; after < head.last_seq; ) {
    const page = await client.log(session.id, after, PAGE);
    if (page.events.length === 0) return;
    for (const event of page.events) {
      if (until !== undefined && event.seq > until) return;
      await emit(event);
      if (
        cut &&
        "checkpoint" in cut &&
        event.type === "checkpoint.created" &&
        event.data.id === cut.checkpoint
      )
        return;
    }
    after = page.events.at(-1)!.seq;
  }
}

async function replayOrigin(
  client: BrainClient,
  session: SessionView,
  emit: Emit,
  depth: number,
): Promise<void> {
  const { forked_from, handoff_from } = session;
  const origin = forked_from
    ? { id: forked_from.session, cut: { checkpoint: forked_from.checkpoint } }
    : handoff_from
      ? { id: handoff_from.session, cut: { seq: handoff_from.seq } }
      : undefined;
  if (!origin) return;
  let parent: SessionView;
  try {
    parent = await client.session(origin.id);
  } catch (err) {
    // An origin since deleted (or, in a damaged store, of another tenant: the daemon answers 404 for it) leaves
    // the replay with what this session's own log holds.
    if (err instanceof ClientError && err.status === 404) return;
    throw err;
  }
  // A session made after this one under its deleted origin's id (a client-chosen id) is not its origin.
  if (!isParentOf(parent, session)) return;
  await replay(client, parent, origin.cut, emit, depth + 1);
}

/** The seq of checkpoint `id`'s checkpoint.created among the events the log still holds, if it is one of them. */
async function checkpointSeq(
  client: BrainClient,
  sessionId: string,
  id: string,
  last: number,
): Promise<number | undefined> {
  for (let after = 0; after < last; ) {
    const { events } = await client.log(sessionId, after, PAGE);
    if (events.length === 0) return undefined;
    const found = events.find((e) => e.type === "checkpoint.created" && e.data.id === id);
    if (found) return found.seq;
    after = events.at(-1)!.seq;
  }
  return undefined;
}
