import { describe, expect, it } from "vitest";
import { IsoTime } from "./iso-time.js";

describe("IsoTime", () => {
  it("gives toISOString's text for every millisecond, in order and out of it", () => {
    const time = new IsoTime();
    const start = Date.UTC(2026, 11, 31, 23, 59, 58, 990);
    for (let ms = start; ms < start + 2_500; ms++) expect(time.of(ms)).toBe(new Date(ms).toISOString());
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 20_000; i++) {
      // Near one instant (the same second often), or anywhere in toISOString's range, negative years included.
      const ms = i % 2 === 0 ? start + (next() % 3_000) : (next() / 2 ** 31 - 0.5) * 2 * 8.64e15;
      const whole = Math.trunc(ms);
      expect(time.of(whole)).toBe(new Date(whole).toISOString());
    }
  });

  it("handles the seconds around the epoch and the range's ends", () => {
    const time = new IsoTime();
    for (const ms of [
      -1001,
      -1000,
      -999,
      -1,
      0,
      1,
      999,
      1000,
      8.64e15,
      -8.64e15,
      8.64e15 - 1,
      253402300799999,
      253402300800000,
    ])
      expect(time.of(ms)).toBe(new Date(ms).toISOString());
  });

  it("throws where toISOString throws", () => {
    const time = new IsoTime();
    expect(() => time.of(Number.NaN)).toThrow(RangeError);
    expect(() => time.of(8.64e15 + 1)).toThrow(RangeError);
  });
});
