// What a test of a close during a container's start checks of the turn it ended (vitest's expect: a test helper,
// kept apart from docker-engine.ts, which the bench imports too).
import { expect } from "vitest";
import type { TurnOutcome } from "../core/session.js";
import { readEventsFile } from "../store/fs/log-read.js";
import { sessionContainers } from "./docker-engine.js";

/**
 * A turn a close ended while its session's container started: it failed, its turn.settled in the log says the same
 * error, and no container of the session is left. Its error's message.
 */
export async function failedByClose(events: string, sessionId: string, settled: Promise<TurnOutcome>) {
  const outcome = await settled;
  expect(outcome.status).toBe("failed");
  const logged = (await readEventsFile(events)).find((e) => e.type === "turn.settled");
  expect(logged?.data).toMatchObject({ status: "failed", error: { message: outcome.error?.message } });
  expect(sessionContainers(sessionId)).toEqual([]);
  return outcome.error?.message;
}
