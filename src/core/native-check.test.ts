import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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

  it("finds a prompt that straddles the end of a chunk in a large transcript", () => {
    const file = join(dir, "large.jsonl");
    const prompt = "find me across the boundary";
    writeFileSync(file, `${"x".repeat((1 << 20) - 10)}${JSON.stringify({ text: prompt })}\n`);
    expect(missingHistory("the transcript", dir, [file], { lastPrompt: prompt })).toBeUndefined();
  });

  it("neither waits on a FIFO at the transcript's name nor reads through a link, and says what is there", async () => {
    // An agent can write where its transcript is. Reading a FIFO blocked until something wrote to it, and this
    // check is synchronous: the daemon's whole event loop stopped. A writer that opens and closes it at once
    // keeps a reader that does wait from hanging this test: it then reads nothing.
    const fifo = join(dir, "fifo.jsonl");
    execFileSync("mkfifo", [fifo]);
    const writer = spawn("sh", ["-c", 'while :; do : > "$0"; done', fifo], { stdio: "ignore" });
    try {
      expect(missingHistory("the transcript", dir, [fifo], { lastPrompt: "hello" })).toBe(
        `the transcript (fifo.jsonl) does not hold the last prompt Brain's log says the model answered ("hello"); fifo.jsonl is a FIFO, not a regular file`,
      );
    } finally {
      writer.kill("SIGKILL");
    }
    // A link could lead anywhere (a device that never ends): not followed, even to a file that holds the prompt.
    const held = join(dir, "held.jsonl");
    writeFileSync(held, `${JSON.stringify({ text: "hello" })}\n`);
    const link = join(dir, "link.jsonl");
    symlinkSync(held, link);
    expect(missingHistory("the transcript", dir, [link], { lastPrompt: "hello" })).toMatch(
      /link\.jsonl is a symbolic link, not a regular file$/,
    );
    expect(missingHistory("the transcript", dir, [link, held], { lastPrompt: "hello" })).toBeUndefined();
  });
});
