// What the tests of a fork or handoff racing a delete of its source hold (src/server/delete-fork-*.test.ts): the
// delete between its check of the dependents and its removal, and, on a cluster node, the fork once its own record
// is written and its re-read of the source sees a delete's mark.
import type { NatsSessionStore } from "../store/nats/session-store.js";
import type { TestDaemon } from "./daemon.js";
import type { Hold } from "./held-close.js";

/** Holds the next read of the sessions of a tenant (the delete's look for sessions made from its own) once done. */
export function holdDependentsRead(d: TestDaemon): Hold {
  const list = d.brain.list.bind(d.brain);
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const gate = new Promise<void>((r) => (release = r));
  d.brain.list = async (unreadable, tenant) => {
    const listed = await list(unreadable, tenant);
    if (tenant !== undefined) {
      d.brain.list = list;
      reach();
      await gate;
    }
    return listed;
  };
  return { reached, release };
}

/**
 * Resolves once `store` made a session's record (a fork's or handoff's) and then read session `source`'s record
 * marked as being deleted: the new session waits for that delete to end.
 */
export function markSeenAfterMaking(store: NatsSessionStore, source: string): Promise<void> {
  const create = store.create.bind(store);
  const get = store.get.bind(store);
  let made = false;
  store.create = async (input) => {
    const record = await create(input);
    made = true;
    return record;
  };
  return new Promise((seen) => {
    store.get = async (id) => {
      const record = await get(id);
      if (made && id === source && record?.deleting) {
        store.get = get;
        store.create = create;
        seen();
      }
      return record;
    };
  });
}

/** Holds `store`'s next making of a session's record, once the record is written, until `release`. */
export function holdAfterMaking(store: NatsSessionStore): Hold {
  const create = store.create.bind(store);
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const gate = new Promise<void>((r) => (release = r));
  store.create = async (input) => {
    store.create = create;
    const record = await create(input);
    reach();
    await gate;
    return record;
  };
  return { reached, release };
}
