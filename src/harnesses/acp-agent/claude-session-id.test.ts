// acp:claude makes a file name of the session id claude-agent-acp gives in session/new (and Brain records in the
// native dir's state file): one that is not a plain name must not lead Brain's reads of the transcript out of the
// session's dir.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { PRESETS } from "./presets.js";

it("claude: a session id that climbs out of the dir is refused, not followed to a transcript elsewhere", async () => {
  const claude = PRESETS.find((p) => p.name === "claude")!.profile;
  const dir = tempDir("brain-claude-sid-");
  const native = join(dir, "native");
  const cwd = join(native, "work");
  mkdirSync(cwd, { recursive: true });
  // Outside the native dir, a file that reads as a transcript ending with the turn's answer.
  const record = { type: "assistant", message: { content: [{ type: "text", text: "the answer" }] } };
  writeFileSync(join(dir, "outside.jsonl"), `${JSON.stringify(record)}\n`);
  const ctx = { family: {} as never, dir: native, cwd, config: {}, provider: {} };
  const id = "../../../../outside";
  const refused = /"..\/..\/..\/..\/outside" is not a Claude session id .*Brain makes no file name of it/;
  await expect(Promise.resolve().then(() => claude.written!(ctx, id, "the answer"))).rejects.toThrow(refused);
  await expect(Promise.resolve().then(() => claude.place!(ctx, id))).rejects.toThrow(refused);
  rmSync(dir, { recursive: true, force: true });
});
