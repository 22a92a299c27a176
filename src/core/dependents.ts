// A fork's or handoff's history is read from its parent's log when it is used (core/conversation-chain.ts
// ancestorEvents), not copied: a parent deleted takes its part of the conversation out of every session made from
// it, and their handoffs and rebuilds carry only their own turns. So a delete of a session others depend on is
// refused unless forced (the daemon's DELETE, `brain sessions rm`), as Docker refuses to remove an image with
// dependent children.
import { DEFAULT_TENANT } from "../protocol/session.js";
import type { Brain } from "./brain.js";
import { isParentOf } from "./conversation-chain.js";
import type { UnreadableSession } from "./store.js";

/** How many dependents a refusal names; the rest are counted. */
const NAMED = 5;

/**
 * The stored sessions whose history comes from session `id`'s log (forked or handed off from it), of its tenant, in
 * the store's order; none when there is no session `id`. One pass over the records (`tenant`'s alone, given it):
 * their summaries carry forked_from and handoff_from.
 */
export async function dependentsOf(
  brain: Pick<Brain, "list">,
  id: string,
  tenant?: string,
): Promise<string[]> {
  let damaged: UnreadableSession | undefined;
  const records = await brain.list((s) => {
    if (s.id === id) damaged = s;
  }, tenant);
  const self = records.find((r) => r.id === id) ?? damaged;
  if (!self) return [];
  const owner = self.tenant ?? DEFAULT_TENANT;
  // A child made after the session of its id is another's (the parent deleted and its id given again): it reads
  // nothing from this one. A damaged record's date is only its file's last write when undated: any child naming
  // it may be its own, and is kept from losing its history (a forced delete still goes).
  const made = "undated" in self && self.undated ? undefined : self.created_at;
  return records
    .filter((r) => (r.forked_from ?? r.handoff_from)?.session === id && r.id !== id)
    .filter((r) => (r.tenant ?? DEFAULT_TENANT) === owner)
    .filter((r) => made === undefined || isParentOf({ created_at: made }, r))
    .map((r) => r.id);
}

/**
 * Why a delete of session `id` that sessions `dependents` read their history from is refused: it names them (the
 * first few, and how many more) and the way on, `force` being how to delete it anyway.
 */
export function dependedOn(id: string, dependents: readonly string[], force: string): string {
  const named = dependents.slice(0, NAMED).join(", ");
  const rest = dependents.length > NAMED ? ` and ${dependents.length - NAMED} more` : "";
  const count = dependents.length === 1 ? "1 session was" : `${dependents.length} sessions were`;
  return `session ${id} is not deleted: ${count} forked or handed off from it and read their history from its log (${named}${rest}); delete those first, or delete it anyway with ${force}, and they lose the part of their conversation that came from it`;
}
