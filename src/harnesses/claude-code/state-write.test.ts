// Claude Code reports its session id as each process starts; Brain records a new one in its state file. That
// write can fail (a full disk): the session must hear of it, not lose the daemon to an unhandled rejection.
import { afterEach, expect, it } from "vitest";
import { events, type TestBrain } from "../../testing/brain.js";
import { STATE_FILE } from "./harness.js";
import { answeringClaude, fakeClaudeBrain } from "./testing/fake-claude.js";

/**
 * Answers each user line at once, under a session id of its own choosing (as a CLI that forked one), having first
 * put a directory where Brain's state file is written through a temporary name: the write fails as on a full disk.
 */
const FAKE = answeringClaude(
  '"00000000-0000-4000-8000-000000000001"',
  `fs.mkdirSync(path.dirname(process.env.CLAUDE_CONFIG_DIR) + "/${STATE_FILE}.tmp/inside", { recursive: true });`,
);

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

it("a state file it cannot write is a warning on the session, and the turn completes", async () => {
  t = fakeClaudeBrain(FAKE);
  const session = await t.brain.create({ harness: "claude-code" });
  const settled = await (await session.prompt("hello")).settled;
  expect(settled.status).toBe("completed");
  const warnings = (await events(session)).filter((e) => e.type === "harness.warning");
  expect(JSON.stringify(warnings)).toMatch(/could not record Claude Code's session id/);
});
