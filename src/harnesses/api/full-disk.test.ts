// The conversation file when an append of it fails (a full disk, a path taken by something else) and later works.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { canMount, smallDisk } from "../../testing/small-disk.js";
import { CONVERSATION_FILE, Conversation } from "./conversation.js";

const dirs: string[] = [];
const unmounts: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const unmount of unmounts.splice(0)) await unmount();
});
const mountable = canMount();

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

describe("an append the disk fills up in the middle of", () => {
  it.skipIf(!mountable)(
    "fails as a failed append, not as a written one, and the next append is a line of its own",
    async () => {
      const disk = smallDisk("64k", unmounts);
      const conversation = new Conversation(disk.home);
      // Bigger than the disk: write(2) takes what fits and reports a short count, not an error.
      const big = {
        type: "message" as const,
        message: { role: "user" as const, content: "x".repeat(200_000) },
      };
      await expect(conversation.append(big)).rejects.toThrow(/ENOSPC/);
      expect(conversation.messages()).toEqual([]);

      disk.grow();
      const kept = { type: "message" as const, message: { role: "user" as const, content: "kept" } };
      await conversation.append(kept);
      await conversation.close();
      const reopened = new Conversation(disk.home);
      expect(reopened.messages()).toEqual([kept.message]);
      expect(reopened.damaged).toHaveLength(1);
    },
  );
});
