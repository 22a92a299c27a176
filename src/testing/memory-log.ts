// An event log in memory for tests of what wraps a log (the redacting log): it numbers what it is given as a log
// does, and fails its appends, as a full disk would, while `failing` is set.
import type { EventLog } from "../core/event-log.js";
import type { NewEvent, SessionEvent } from "../protocol/events.js";

export function memoryLog(): EventLog & { stored: SessionEvent[]; failing: boolean } {
  const stored: SessionEvent[] = [];
  return {
    session: "s",
    stored,
    failing: false,
    get lastSeq() {
      return stored.length;
    },
    async append(events: NewEvent[]) {
      if (this.failing) throw new Error("ENOSPC: no space left on device");
      const out = events.map(
        (e, i) => ({ ...e, seq: stored.length + i + 1, ts: "t", session: "s" }) as SessionEvent,
      );
      stored.push(...out);
      return out;
    },
    async read(after: number) {
      return stored.filter((e) => e.seq > after);
    },
    subscribe: () => () => {},
    async close() {},
  };
}
