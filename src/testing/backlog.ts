// For the backpressure tests: a harness flooding a session whose disk the test holds (src/core/backlog.ts).
import { expect } from "vitest";
import { BACKLOG_BYTES } from "../core/backlog.js";
import type { Session } from "../core/session.js";

/** The bytes of the session's events that wait for the disk. */
export const waiting = (session: Session): number => session.log.pending!.bytes;

/**
 * Resolves, with the flooder's last count, once the log is behind by more than the bound and `written` (how many
 * events the flooder says it wrote) has not moved across several polls: blocked on its pipe, if the gate paused
 * it (a flooder that has written everything has stopped too).
 */
export async function blocked(session: Session, written: () => number): Promise<number> {
  let [last, still] = [-1, 0];
  await expect
    .poll(
      () => {
        const now = written();
        still = now === last ? still + 1 : 0;
        last = now;
        return still >= 4 && waiting(session) > BACKLOG_BYTES;
      },
      { timeout: 60_000, interval: 250 },
    )
    .toBe(true);
  return last;
}
