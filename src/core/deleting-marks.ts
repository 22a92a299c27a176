// A delete of a session others may be made from, across the nodes of a cluster. On one node the delete (its check
// of the dependents and its removal) and each fork or handoff of its session run one at a time (SessionService
// `sources`); nodes share no such lock, so a fork made on node B between node A's check and its removal was made
// (201) with a parent that was then gone, and its history with it (./conversation-chain.ts). So, through the
// store's own record of the session (SessionStore.get and update, a compare-and-set of the record in NATS):
// - the delete marks the record "deleting" (naming its node and the time), then checks, then removes; a delete that
//   fails after marking (refused 409, or its removal failed) clears its mark;
// - a fork or handoff, once its own record is written, reads its source's record again: marked by another node's
//   delete, it waits for the delete to end, then stays (the delete saw it and was refused) or goes (its source was
//   removed: it is answered 404 'no session', as a fork that comes during a delete on one node is).
// The delete's check (a list, which sees every record written before it began) sees the new record, or the new
// record was written after the mark and its read of the source sees the mark (or the source gone): never neither.
//
// A mark whose delete cannot clear it (its node died meanwhile) is void once DELETING_VOID_MS old: a fork waits at
// most that long, and a later delete marks over it. A mark naming this node is void at once: here deletes, forks and
// handoffs of a session already run one at a time, so one seen here is left by a run of this node that ended.
// A store no other daemon shares (src/store/fs, one daemon's) is never marked: it works as before.
import type { SessionRecord } from "../protocol/session.js";
import { sleep } from "./sleep.js";
import type { SessionStore } from "./store.js";

export type DeletingMark = NonNullable<SessionRecord["deleting"]>;

/** How old a mark is when its delete is taken for dead (its node died before it could clear it): ms. */
export const DELETING_VOID_MS = 120_000;
/** How often a fork, or a delete, waiting for another node's delete reads the record again (ms). */
const POLL_MS = 50;

class MarkedByAnother extends Error {}

export class DeletingMarks {
  constructor(
    private readonly store: Pick<SessionStore, "get" | "update" | "node">,
    private readonly voidMs = DELETING_VOID_MS,
  ) {}

  /** Whether a mark is a delete under way on another node. */
  private underWay(mark: DeletingMark | undefined): boolean {
    if (!mark || mark.node === this.store.node) return false;
    return Date.now() - Date.parse(mark.at) < this.voidMs;
  }

  /**
   * Marks session `id`'s record as being deleted by this node, once no other node's delete of it is under way.
   * Undefined when nothing is marked: a store not shared (no node), or a record gone or that cannot be read (a
   * damaged one is removed unmarked, as before).
   */
  async mark(id: string): Promise<DeletingMark | undefined> {
    const node = this.store.node;
    if (node === undefined) return undefined;
    for (;;) {
      const mark = { node, at: new Date().toISOString() };
      try {
        await this.store.update(id, (current) => {
          if (this.underWay(current.deleting)) throw new MarkedByAnother();
          return { deleting: mark };
        });
        return mark;
      } catch (err) {
        if (!(err instanceof MarkedByAnother)) {
          // Gone (its removal finds nothing) or damaged (removed unmarked): only a record still read failed it.
          if (await this.store.get(id).catch(() => undefined)) throw err;
          return undefined;
        }
      }
      await sleep(POLL_MS);
    }
  }

  /**
   * Takes this delete's mark off session `id`'s record (the delete failed). Never fails the delete's own answer:
   * a mark left (the store unreachable now) goes void in DELETING_VOID_MS.
   */
  async clear(id: string, mark: DeletingMark | undefined): Promise<void> {
    if (!mark) return;
    const ours = (current: SessionRecord) =>
      current.deleting?.node === mark.node && current.deleting.at === mark.at;
    await this.store.update(id, (current) => (ours(current) ? { deleting: undefined } : {})).catch(() => {});
  }

  /**
   * Whether session `id`, which a session was just made from (its record written), is still there once any delete
   * of it under way on another node has ended. A record that cannot be read now is taken as there.
   */
  async stays(id: string): Promise<boolean> {
    if (this.store.node === undefined) return true;
    for (;;) {
      const record = await this.store.get(id).catch(() => null);
      if (record === undefined) return false;
      if (record === null || !this.underWay(record.deleting)) return true;
      await sleep(POLL_MS);
    }
  }
}
