import { describe, expect, it } from "vitest";
import { SAVE_EVERY, worthSaving } from "./log-state.js";

describe("worthSaving", () => {
  it("saves once the last anchor is SAVE_EVERY past the last save", () => {
    expect(worthSaving(SAVE_EVERY + 100, 0, SAVE_EVERY + 50)).toBe(true);
    expect(worthSaving(SAVE_EVERY + 100, 0, SAVE_EVERY - 1)).toBe(false);
    expect(worthSaving(3 * SAVE_EVERY, 2 * SAVE_EVERY, 3 * SAVE_EVERY - 10)).toBe(false);
  });

  it("waits for the next anchor while the last line is longer than the scan the save would spare", () => {
    // A turn's whole text as one line of 3 × SAVE_EVERY, starting just past the threshold.
    const start = SAVE_EVERY + 10;
    expect(worthSaving(start + 3 * SAVE_EVERY, 0, start)).toBe(false);
    // Its turn.settled, a short line of its own, follows.
    const settled = start + 3 * SAVE_EVERY;
    expect(worthSaving(settled + 200, 0, settled)).toBe(true);
  });
});
