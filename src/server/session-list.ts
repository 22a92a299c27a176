// GET /v1/sessions's body, written one session at a time as the client takes it. A page may hold 1,000 sessions
// (without `limit`, all of a tenant's), each with a config of up to 4 MiB: built whole, one answer could hold
// gigabytes of the daemon's heap. Each view is read when its turn comes, so one is held at a time.
import type { Brain } from "../core/brain.js";
import { BrainError } from "../core/errors.js";
import { ownerOf, type SessionSummary, type UnreadableSession } from "../core/store.js";
import type { SessionListQuery, SessionView, UnreadableSessionView } from "../protocol/api.js";
import { SESSION_ID_PATTERN, type SessionRecord } from "../protocol/session.js";
import { DEFAULT_TENANT } from "./auth/tokens.js";
import { notFound } from "./errors.js";
import { type Page, pageOf } from "./paging.js";

/** A listed session: its summary, or what is known of it when its record cannot be read. */
export type Listed = SessionSummary | UnreadableSession;

/** The stores' list order (created_at, then id), for readable and unreadable sessions together. */
function oldestFirst(a: Listed, b: Listed): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The sessions of `tenant` (oldest first, or newest), all or `limit` after `after`, and what next. Those whose
 * record cannot be read keep their place, with the error: left out, they would look deleted to their owner. The
 * store filters by tenant: other tenants' sessions are not read for this list.
 */
export async function listedPage(
  brain: Brain,
  tenant: string,
  page: SessionListQuery,
): Promise<Page<Listed>> {
  const unreadable: UnreadableSession[] = [];
  const shown: Listed[] = await brain.list((session) => unreadable.push(session), tenant);
  if (unreadable.length > 0) {
    shown.push(...unreadable);
    shown.sort(oldestFirst);
  }
  return pageOf(page.order === "newest" ? shown.reverse() : shown, page, "session");
}

/**
 * A listed session's view (`view` of its record: undefined when not the caller's); undefined once it is deleted
 * or while its log was never written, what is wrong with its record when it cannot be read (damaged since it was
 * listed).
 */
export async function listedView(
  brain: Brain,
  id: string,
  view: (record: SessionRecord) => SessionView | undefined,
): Promise<SessionView | { error: string } | undefined> {
  let record: SessionRecord;
  try {
    record = await brain.record(id);
  } catch (err) {
    if (err instanceof BrainError && err.code === "not_found") return undefined;
    const why = err instanceof Error ? err.message : String(err);
    return {
      error: `${why}; repair the file (or restore it from a backup), or drop the session with DELETE /v1/sessions/${id}`,
    };
  }
  const shown = view(record);
  if (!shown) return undefined;
  // Left out, as if not made yet: nobody was told of a session whose log was never written. Its maker stopped
  // before its first event (its next open removes it), or is still making it.
  const look = await brain.logLook(id);
  if (!look) return dated(brain, id, shown);
  if (look.unwritten) return undefined;
  return look.updatedAt === undefined ? shown : { ...shown, updated_at: look.updatedAt };
}

/** `view` with when its session's log was last written (ACP's updatedAt), when the store can tell. */
export async function dated(brain: Brain, id: string, view: SessionView): Promise<SessionView> {
  const updated = await brain.updatedAt(id);
  return updated === undefined ? view : { ...view, updated_at: updated };
}

export function streamedList(
  items: readonly { id: string; error?: string }[],
  next: string | undefined,
  view: (id: string) => Promise<SessionView | { error: string } | undefined>,
  shown: (message: string) => string,
): Response {
  const encoder = new TextEncoder();
  let at = 0;
  let written = 0;
  // Few (a page's damaged records), so kept to be written after the sessions.
  const unreadable: UnreadableSessionView[] = [];
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode('{"sessions":['));
    },
    async pull(controller) {
      while (at < items.length) {
        const item = items[at++]!;
        // Deleted since it was listed: left out, as from a list made a moment later.
        const listed = item.error === undefined ? await view(item.id) : { error: item.error };
        if (!listed) continue;
        if ("error" in listed && typeof listed.error === "string") {
          const message = shown(listed.error);
          unreadable.push({ id: item.id, error: { code: "brain_error", message } });
          continue;
        }
        controller.enqueue(encoder.encode(`${written++ > 0 ? "," : ""}${JSON.stringify(listed)}`));
        return;
      }
      const rest = unreadable.length > 0 ? `,"unreadable":${JSON.stringify(unreadable)}` : "";
      // `next` only when a page left sessions out, as in a body built whole.
      controller.enqueue(
        encoder.encode(`]${rest}${next === undefined ? "" : `,"next":${JSON.stringify(next)}`}}`),
      );
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "application/json" } });
}

/**
 * Refuses (404, as for no session) a delete by a caller whose tenant does not own session `id`. A session whose
 * record cannot be read is its owner's to delete too (core/store.ts ownerOf says who that is): by hand, on a
 * cluster, its log and checkpoints were left behind.
 */
export async function deletable(brain: Brain, tenant: string, id: string): Promise<void> {
  const store = { get: (id: string) => brain.record(id).catch(notFoundAsNone), list: brain.list.bind(brain) };
  const owner = SESSION_ID_PATTERN.test(id) ? await ownerOf(store, id).catch(() => undefined) : undefined;
  if (!owner || (owner.tenant ?? DEFAULT_TENANT) !== tenant) throw notFound(`no session "${id}"`);
}

function notFoundAsNone(err: unknown): undefined {
  if (err instanceof BrainError && err.code === "not_found") return undefined;
  throw err;
}
