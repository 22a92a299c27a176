// The conversation file is read within a bound at open: before, it was read whole, so a file made huge, or a
// special file planted in its place by a restore (/dev/zero, a FIFO), grew the daemon without limit or hung it.
import { execFileSync } from "node:child_process";
import { rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeLine } from "../../protocol/ndjson.js";
import { tempDir } from "../../testing/brain.js";
import { CONVERSATION_FILE, Conversation, type Entry } from "./conversation.js";
import { conversationReadLimit } from "./conversation-file.js";
import { DEFAULTS } from "./settings.js";
import { toolMessage } from "./tools.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dirWith(entries: Entry[]): string {
  const dir = tempDir();
  dirs.push(dir);
  writeFileSync(join(dir, CONVERSATION_FILE), entries.map((entry) => encodeLine(entry)).join(""));
  return dir;
}

const user = (text: string): Entry => ({ type: "message", message: { role: "user", content: text } });
const older = Array.from({ length: 200 }, (_, i) => user(`older message ${i} ${"x".repeat(100)}`));

describe("the api harness's conversation file at open", () => {
  it("reads the tail past the limit, from its last compaction, as a whole read would", () => {
    const entries = [
      ...older,
      { type: "compaction" as const, summary: "so far" },
      user("after one"),
      user("after two"),
    ];
    const whole = new Conversation(dirWith(entries)).messages();
    const bounded = new Conversation(dirWith(entries), 2_000);
    expect(bounded.messages()).toEqual(whole);
    expect(bounded.length).toBe(3);
  });

  it("keeps a compaction whose line starts exactly where the tail read starts", () => {
    const after = [user("after one"), user("after two")];
    const tail = [{ type: "compaction" as const, summary: "so far" }, ...after];
    const dir = dirWith([...older, ...tail]);
    const limit = tail.map((entry) => encodeLine(entry)).join("").length;
    const bounded = new Conversation(dir, limit);
    expect(bounded.messages()).toEqual(new Conversation(dir).messages());
    expect(bounded.length).toBe(3);
  });

  it("refuses a file longer than the limit with no compaction in its tail, naming the file and the fix", () => {
    const dir = dirWith(older);
    expect(() => new Conversation(dir, 2_000)).toThrow(
      new RegExp(`${join(dir, CONVERSATION_FILE)} holds .* no compaction.*compact_at_tokens`),
    );
  });

  it("refuses a huge sparse file without reading it whole", () => {
    const dir = dirWith([user("hi")]);
    truncateSync(join(dir, CONVERSATION_FILE), 8 * 2 ** 30);
    expect(() => new Conversation(dir, 1 << 20)).toThrow(/no compaction/);
  });

  it("refuses a special file in its place (a device, a FIFO), naming it and the fix", () => {
    const device = tempDir();
    dirs.push(device);
    symlinkSync("/dev/zero", join(device, CONVERSATION_FILE));
    expect(() => new Conversation(device)).toThrow(
      /conversation\.jsonl is a character device, not a regular file.*remove it/,
    );
    const fifo = tempDir();
    dirs.push(fifo);
    execFileSync("mkfifo", [join(fifo, CONVERSATION_FILE)]);
    expect(() => new Conversation(fifo)).toThrow(/is a FIFO, not a regular file/);
  });

  it("opens after tool results longer together than what is read: the file keeps no more of one than a model is sent", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const conversation = new Conversation(dir);
    // Two results of a tool that reads a big file whole: each within what a stdio MCP server may send.
    const big = `start\n${"y".repeat(36 << 20)}\nend`;
    for (const id of ["call_1", "call_2"]) {
      const result = { content: [{ type: "text" as const, text: big }], is_error: false };
      const message = toolMessage([{ id, name: "read", input: {} }], [result]);
      await conversation.append({ type: "message", message });
    }
    await conversation.close();
    const reopened = new Conversation(dir, conversationReadLimit(DEFAULTS.compactAtTokens));
    expect(reopened.length).toBe(2);
    const kept = JSON.stringify(reopened.messages());
    expect(kept).toContain("start\\ny");
    expect(kept).toContain("y\\nend");
  });

  it("follows the context budget: a higher compaction threshold reads more", () => {
    expect(conversationReadLimit(10_000_000)).toBeGreaterThan(conversationReadLimit(100_000));
  });
});
