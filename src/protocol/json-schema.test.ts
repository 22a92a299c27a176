import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateSchemas } from "./json-schema.js";

describe("schema/", () => {
  it("is generated from src/protocol (run `npm run build && npm run schema:write` when this fails)", () => {
    for (const [file, text] of Object.entries(generateSchemas())) {
      const committed = readFileSync(join(import.meta.dirname, "../../schema", file), "utf8");
      expect(committed, `schema/${file} is stale`).toBe(text);
    }
  });

  it("closes every frame object, like the runner protocol's strict decoding", () => {
    const runner = JSON.parse(generateSchemas()["runner-to-brain.json"]!);
    const text = JSON.stringify(runner);
    expect(text).toContain('"additionalProperties":false');
    expect(text).not.toContain('"additionalProperties":true');
  });
});
