// Claude Code's session id names its transcript's file, so Brain puts it into paths. It comes from the CLI's
// stream and from the state file in the native dir, both of which what runs in the session can write: one that is
// not a plain name must not lead Brain's reads (the transcript's wait, verified resume) out of the session.
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, tempDir } from "../../testing/brain.js";
import { ClaudeCodeFactory } from "./factory.js";
import { STATE_FILE } from "./harness.js";
import { answeringClaude } from "./testing/fake-claude.js";

/** Reports a session id that climbs out of its dir, and writes where its native dir is to $DIR/native. */
const fake = (dir: string) =>
  answeringClaude(
    '"../../../../../../../../../../outside-the-session"',
    `fs.writeFileSync(${JSON.stringify(dir)} + "/native", path.dirname(process.env.CLAUDE_CONFIG_DIR));`,
  );

const brains: TestBrain[] = [];
afterEach(async () => {
  for (const t of brains.splice(0).reverse()) await t.cleanup();
});

function brainOn(bin: string, home?: string): TestBrain {
  const t = makeBrain({
    factories: [new ClaudeCodeFactory({ bin })],
    provider: { base_url: "http://127.0.0.1:9", api_key: "sk-fake" },
    ...(home ? { home } : {}),
  });
  brains.push(t);
  return t;
}

it("keeps to a session id that is a plain name: one that climbs out of the dir is ignored, and refused in the state file", async () => {
  const dir = tempDir("brain-claude-sid-");
  const bin = join(dir, "claude");
  writeFileSync(bin, fake(dir));
  chmodSync(bin, 0o755);
  const t = brainOn(bin);
  const session = await t.brain.create({ harness: "claude-code" });
  expect((await (await session.prompt("hello")).settled).status).toBe("completed");
  const warnings = (await events(session)).filter((e) => e.type === "harness.warning");
  expect(JSON.stringify(warnings)).toMatch(/ignored the session id .*outside-the-session.* not a plain name/);
  const stateFile = join(readFileSync(join(dir, "native"), "utf8"), STATE_FILE);
  const recorded = JSON.parse(readFileSync(stateFile, "utf8")).session_id;
  expect(recorded).toMatch(/^[0-9a-f-]{36}$/);

  // The state file changed by what runs in the session: the next open says what to do instead of following it.
  await t.brain.close();
  writeFileSync(stateFile, JSON.stringify({ session_id: "../../../../x" }));
  const again = brainOn(bin, t.home);
  const reopened = await (await (await again.brain.session(session.id)).prompt("again")).settled;
  expect(reopened.status).toBe("failed");
  expect(reopened.error?.message).toMatch(
    /claude-code.json names the Claude session "..\/..\/..\/..\/x", which is not a session id .*brain sessions rebuild/,
  );
});
