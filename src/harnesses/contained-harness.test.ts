// The wrappers that run a harness in a container (docker sandbox, devcontainer) pass verified resume through:
// without it a sandboxed CLI whose transcript was lost would resume into an empty context, unchecked.
import { describe, expect, it } from "vitest";
import type { ExpectedHistory, Harness } from "../core/harness.js";
import { quietHarness } from "../testing/brain.js";
import { ContainedHarness } from "./contained-harness.js";

function inner(verify?: (e: ExpectedHistory) => Promise<string | undefined>): Harness {
  return quietHarness(verify ? { verify } : {});
}

const expected = { lastPrompt: "remember PLUM", turns: 1 };

describe.each([
  ["docker sandbox", (h: Harness) => new ContainedHarness(h, async () => {})],
  ["devcontainer", (h: Harness) => new ContainedHarness(h, async () => {}, { nativeDir: "inner" })],
])("%s wrapper", (_name, wrap) => {
  it("asks the inner harness whether it holds the conversation", async () => {
    const asked: ExpectedHistory[] = [];
    const missing = wrap(
      inner(async (e) => {
        asked.push(e);
        return "the transcript is missing";
      }),
    );
    expect(await missing.verify!(expected)).toBe("the transcript is missing");
    expect(asked).toEqual([expected]);
    expect(await wrap(inner(async () => undefined)).verify!(expected)).toBeUndefined();
    // An inner harness with nothing to check has nothing missing.
    expect(await wrap(inner()).verify!(expected)).toBeUndefined();
  });
});
