// The conversation file when an append of it fails (a full disk, a path taken by something else) and later works.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CONVERSATION_FILE, Conversation } from "./conversation.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("an append that could not be written", () => {
  it("is left out of the conversation as of the file, and the next append is written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-conversation-"));
    dirs.push(dir);
    const conversation = new Conversation(dir);
    const file = join(dir, CONVERSATION_FILE);
    // A directory where the file goes: opening it to append fails (EISDIR), as a write to a full disk would.
    mkdirSync(file);
    const lost = { type: "message" as const, message: { role: "user" as const, content: "lost" } };
    await expect(conversation.append(lost)).rejects.toThrow(/EISDIR/);
    expect(conversation.messages()).toEqual([]);

    rmSync(file, { recursive: true });
    const kept = { type: "message" as const, message: { role: "user" as const, content: "kept" } };
    await conversation.append(kept);
    expect(conversation.messages()).toEqual([kept.message]);
    const reopened = new Conversation(dir);
    expect([reopened.messages(), reopened.damaged]).toEqual([[kept.message], []]);
    expect(await conversation.checkpoint()).toEqual([
      { path: CONVERSATION_FILE, size: readFileSync(file).length, append_only: true },
    ]);
    await conversation.close();
  });
});
