// An Anthropic turn whose first answer streams an error and whose retry answers: the turn completes with the
// retry's text alone, and its warnings say what was retried (for the tests of how streamed errors are judged).
import { expect } from "vitest";
import { events, textOf } from "../../../testing/brain.js";
import type { ApiTestBed } from "./bed.js";

/** The streamed error as the fake provider takes it: after `after` events, of Anthropic's error `type`. */
export interface StreamedError {
  after: number;
  message: string;
  type: string;
}

/** Runs the turn (one retry allowed, at once) and gives its warnings, once it completed with the retry's text. */
export async function warningsOfRetried(bed: ApiTestBed, streamError: StreamedError): Promise<string[]> {
  const session = await bed.brain().brain.create({
    harness: "api",
    config: { model: "anthropic:fake-model", options: { retries: 1, retry_base_ms: 0 } },
  });
  bed.fake.script([{ text: "never shown", streamError }, { text: "made it" }]);
  const outcome = await (await session.prompt("x")).settled;
  expect(outcome.status).toBe("completed");
  const all = await events(session);
  expect(textOf(all)).toBe("made it");
  return all.filter((e) => e.type === "harness.warning").map((e) => e.data.message);
}
