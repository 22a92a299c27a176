// What runs in a Claude Code session can write where its transcript is (HOME is in the native dir). A FIFO put
// there must not hold a checkpoint, or a thread of Node's file system pool, forever: the checkpoint is refused,
// naming the file and what to do.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { TestBrain } from "../../testing/brain.js";
import { answeringClaude, fakeClaudeBrain } from "./testing/fake-claude.js";

/** Answers each user line, its transcript a FIFO with a writer that opens and closes it over and over. */
const FAKE = answeringClaude(
  '"00000000-0000-4000-8000-000000000002"',
  'const dir = path.join(process.env.CLAUDE_CONFIG_DIR, "projects", fs.realpathSync(process.cwd()).replace(/[^A-Za-z0-9]/g, "-"));',
  `fs.mkdirSync(dir, { recursive: true });
    const fifo = path.join(dir, sid + ".jsonl");
    if (!fs.existsSync(fifo)) {
      require("node:child_process").execFileSync("mkfifo", [fifo]);
      // A reader that waits for a writer is let go at once (it reads nothing): without this, the code this test
      // guards against would hang the test instead of failing it.
      const writer = require("node:child_process").spawn("sh", ["-c", 'while :; do : > "$0"; done', fifo], { stdio: "ignore" });
      fs.writeFileSync(path.join(path.dirname(process.env.CLAUDE_CONFIG_DIR), "writer.pid"), String(writer.pid));
    }`,
);

let t: TestBrain | undefined;
let writerPidFile: string | undefined;
afterEach(async () => {
  const pid = writerPidFile ? Number(readFileSync(writerPidFile, "utf8")) : 0;
  if (pid > 0) process.kill(pid, "SIGKILL");
  writerPidFile = undefined;
  await t?.cleanup();
  t = undefined;
});

it("refuses a checkpoint whose transcript an agent replaced with a FIFO, naming it, instead of waiting on it", async () => {
  t = fakeClaudeBrain(FAKE);
  const session = await t.brain.create({ harness: "claude-code" });
  expect((await (await session.prompt("hello")).settled).status).toBe("completed");
  writerPidFile = join(t.store.paths(session.id).native, "writer.pid");
  await expect(session.checkpoint()).rejects.toThrow(
    /checkpoint refused: native file "claude\/projects\/[^"]+\/00000000-0000-4000-8000-000000000002\.jsonl": it is a FIFO, not the regular file Claude Code writes its transcript to; .*brain sessions rebuild ID/,
  );
});
