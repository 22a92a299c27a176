import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { missingHistory } from "./native-check.js";

const dir = mkdtempSync(join(tmpdir(), "brain-native-check-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("missingHistory", () => {
  it("finds the last prompt as a JSON string, and says what is missing or lacking", () => {
    const file = join(dir, "t.jsonl");
    writeFileSync(file, `${JSON.stringify({ content: 'say "hi"\nplease' })}\n`);
    expect(missingHistory("the transcript", dir, [file], { lastPrompt: 'say "hi"\nplease' })).toBeUndefined();
    expect(missingHistory("the transcript", dir, [file], { lastPrompt: "other" })).toBe(
      `the transcript (t.jsonl) does not hold the last prompt Brain's log says the model answered ("other")`,
    );
    expect(
      missingHistory("the transcript", dir, [join(dir, "gone.jsonl")], { lastPrompt: "x", turns: 2 }),
    ).toBe(
      `the transcript (gone.jsonl) is missing, but Brain's log has 2 answered turns it should hold (last prompt "x")`,
    );
  });

  it("looks only for the text before a secret the log redacted", () => {
    const file = join(dir, "s.jsonl");
    writeFileSync(file, `${JSON.stringify({ content: "use key sk-live-123 now" })}\n`);
    const lastPrompt = "use key [redacted:MY_KEY] now";
    expect(missingHistory("the transcript", dir, [file], { lastPrompt })).toBeUndefined();
  });

  it("finds a prompt a writer stored with every non-ASCII character escaped (Python's json.dumps)", () => {
    const file = join(dir, "py.jsonl");
    // What json.dumps({"text": "café 😀"}) writes.
    writeFileSync(file, '{"text": "caf\\u00e9 \\ud83d\\ude00"}\n');
    expect(missingHistory("the state", dir, [file], { lastPrompt: "café 😀" })).toBeUndefined();
  });
});
