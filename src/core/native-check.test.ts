import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

  it("finds a prompt under any escape a JSON writer may choose, and no other text", () => {
    const prompt = 'is 1 < 2 && 3 > 2? see a/b, é\u2028😀\t"q"';
    const spellings: [string, string][] = [
      // Go's encoding/json and Gson: `<`, `>`, `&`, U+2028 escaped, the rest raw.
      ["go", 'is 1 \\u003c 2 \\u0026\\u0026 3 \\u003e 2? see a/b, é\\u2028😀\\t\\"q\\"'],
      // .NET's System.Text.Json: upper-case hex, every non-ASCII character and `"` as \uXXXX.
      [
        "dotnet",
        "is 1 \\u003C 2 \\u0026\\u0026 3 \\u003E 2? see a/b, \\u00E9\\u2028\\uD83D\\uDE00\\t\\u0022q\\u0022",
      ],
      // PHP's json_encode: "/" as "\/", non-ASCII as \uXXXX.
      ["php", 'is 1 < 2 && 3 > 2? see a\\/b, \\u00e9\\u2028\\ud83d\\ude00\\t\\"q\\"'],
    ];
    for (const [writer, text] of spellings) {
      const file = join(dir, `${writer}.json`);
      writeFileSync(file, `{"text":"${text}"}`);
      expect(JSON.parse(readFileSync(file, "utf8")).text, writer).toBe(prompt);
      expect(missingHistory("the state", dir, [file], { lastPrompt: prompt }), writer).toBeUndefined();
      expect(missingHistory("the state", dir, [file], { lastPrompt: "is 1 < 3" }), writer).toMatch(
        /does not hold the last prompt/,
      );
    }
    // A letter is itself, not its other case.
    writeFileSync(join(dir, "case.json"), '{"text":"plum"}');
    expect(missingHistory("the state", dir, [join(dir, "case.json")], { lastPrompt: "PLUM" })).toMatch(
      /does not hold/,
    );
  });
});
