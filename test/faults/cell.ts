// One cell of the harness fault matrix: arm the fault, run a turn into it, check the turn settles as it
// should, that the session carries on, and that the log on disk lost nothing and holds no secret.
import { expect } from "vitest";
import { FAKE_KEY } from "../../src/harnesses/api/testing/provider.js";
import type { SessionEvent } from "../../src/protocol/events.js";
import { textOf } from "../../src/testing/brain.js";
import { acknowledged, auditLog, type Cell, expectWhole, findSecrets, note } from "./audit.js";
import type { Bed } from "./families.js";

export interface Expected {
  status: "completed" | "failed" | "interrupted";
  code?: "brain_error" | "provider_error";
  message?: RegExp;
  /** A harness.warning that must say what went wrong (for faults that are only warnings). */
  warning?: RegExp;
  /** The next turn completes (false where the fault is permanent, like a host that never starts). */
  recovers: boolean;
  /** Text of the turn that follows the fault. */
  nextText?: RegExp;
}

export async function runCell(cell: Cell, bed: Bed, expected: Expected): Promise<SessionEvent[]> {
  const session = await bed.t.brain.create({ harness: bed.harness, config: bed.config });
  const { seen, stop } = acknowledged(session);
  const outcome = await (await session.prompt(bed.trigger)).settled;
  const next = await session.prompt("again");
  const after = await next.settled;
  stop();
  const file = bed.t.store.paths(session.id).events;
  await bed.t.brain.close();
  const audit = auditLog(file, seen);
  const secrets = findSecrets([FAKE_KEY], [bed.home]);
  note(cell, { eventsLost: audit.eventsLost, secretsFound: secrets.length });

  expect(outcome, JSON.stringify(outcome)).toMatchObject({
    status: expected.status,
    ...(expected.code ? { error: { code: expected.code } } : {}),
  });
  if (expected.message) expect(outcome.error?.message).toMatch(expected.message);
  if (expected.warning) {
    const warnings = audit.events
      .filter((e) => e.type === "harness.warning")
      .map((e) => (e.data as { message: string }).message);
    expect(warnings.join("\n")).toMatch(expected.warning);
  }
  if (expected.recovers) {
    expect(after, JSON.stringify(after)).toMatchObject({ status: "completed" });
    if (expected.nextText) expect(textOf(audit.events, next.turn)).toMatch(expected.nextText);
  } else {
    expect(after.status).toBe("failed");
  }
  expect(expectWhole(audit)).toEqual([]);
  expect(secrets).toEqual([]);
  return audit.events;
}
