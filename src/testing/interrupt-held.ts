// For the interrupt-paused tests: an agent flooding a session whose log the test holds, interrupted while the read
// gate holds its output (src/harnesses/read-gate.ts afterRead). The flooder works in `dir`: it writes `ready` when
// asked to flood, starts on `go`, notes `pid`, `progress` and, once it has stopped, `interrupted`.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { Session } from "../core/session.js";
import type { TestIO } from "../store/fs/testing/fault-io.js";
import { blocked, FLOOD_EVENTS, floodText, progressIn } from "./backlog.js";
import { events } from "./brain.js";
import { alive } from "./processes.js";

/**
 * Floods `session` with its log's fsync held and interrupts it once the gate paused the agent; `whileHeld` runs
 * once the agent has stopped (`pid` its process), the log still held. Resolves with how the turn settled once the
 * log is released and the interrupt is in.
 */
export async function interruptWhileHeld(
  session: Session,
  { io, dir }: { io: TestIO; dir: string },
  whileHeld: (pid: number) => Promise<void> = async () => {},
) {
  const turn = await session.prompt("flood");
  await expect.poll(() => existsSync(join(dir, "ready")), { timeout: 30_000 }).toBe(true);
  const release = io.holdDurable();
  let interrupting: Promise<void> | undefined;
  try {
    writeFileSync(join(dir, "go"), "");
    await blocked(session, () => progressIn(dir));
    const pid = Number(readFileSync(join(dir, "pid"), "utf8"));
    interrupting = session.interrupt();
    await expect.poll(() => existsSync(join(dir, "interrupted")), { timeout: 30_000 }).toBe(true);
    await whileHeld(pid);
  } finally {
    release();
  }
  await interrupting;
  return turn.settled;
}

/**
 * Floods `session` with its log's fsync held, interrupts it once the gate paused the agent, lets the grace run out
 * ten times over, then releases the log: the agent must still run, the turn end "interrupted" with no warning,
 * and every delta it wrote before it stopped be in the log, in order.
 */
export async function expectInterruptOutlivesHeldLog(
  session: Session,
  { io, dir, graceMs }: { io: TestIO; dir: string; graceMs: number },
): Promise<void> {
  const settled = await interruptWhileHeld(session, { io, dir }, async (pid) => {
    // The grace runs out ten times over while the log is held (the agent was killed at the first).
    await new Promise((resolve) => setTimeout(resolve, 10 * graceMs));
    expect(alive(pid)).toBe(true);
  });
  expect(settled.status).toBe("interrupted");
  const all = await events(session);
  expect(all.filter((e) => e.type === "harness.warning").map((e) => e.data)).toEqual([]);
  // Every delta the agent wrote before it stopped is in the log, in order.
  const written = progressIn(dir);
  expect(written).toBeLessThan(FLOOD_EVENTS);
  const text = all
    .filter((e) => e.type === "assistant.delta")
    .map((e) => (e.data as { text: string }).text)
    .join("");
  expect(text === Array.from({ length: written }, (_, i) => floodText(i)).join("")).toBe(true);
}
