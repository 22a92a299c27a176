import { parseArgs } from "node:util";
import { describe, expect, it } from "vitest";
import { newToken } from "./tokens.js";

describe("newToken", () => {
  it("makes tokens a command line takes as an option's value (never starting with '-')", () => {
    // base64url starts with '-' once in 64: 2,000 tokens would hold ~31 such without the prefix.
    const tokens = Array.from({ length: 2000 }, newToken);
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const token of tokens) {
      expect(token).toMatch(/^brain_[A-Za-z0-9_-]{43}$/);
      const { values } = parseArgs({ args: ["--token", token], options: { token: { type: "string" } } });
      expect(values.token).toBe(token);
    }
  });
});
