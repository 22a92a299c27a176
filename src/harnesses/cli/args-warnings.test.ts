// A CLI session's extra flags holding a credential (`--api-key KEY` in an agent definition's args) show it to every
// local user on the CLI's command line: the session runs as before, and its log says which flag and where the key
// goes instead, without the key.
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, tempDir } from "../../testing/brain.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";
import { answeringClaude } from "../claude-code/testing/fake-claude.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

it("warns about each extra flag that puts a credential on the CLI's command line, and runs the turn", async () => {
  const dir = tempDir("brain-cli-argv-");
  const bin = join(dir, "claude");
  writeFileSync(bin, answeringClaude('"argvwarn-sid"'));
  chmodSync(bin, 0o755);
  t = makeBrain({
    factories: [new ClaudeCodeFactory({ bin })],
    provider: { base_url: "http://127.0.0.1:9", api_key: "sk-fake" },
  });
  const key = "cli-argv-key-0123456789";
  const session = await t.brain.create({
    harness: "claude-code",
    config: { options: { args: ["--verbose", `--api-key=${key}`, "--token-file", "/run/token"] } },
  });
  expect((await (await session.prompt("hello")).settled).status).toBe("completed");
  const all = await events(session);
  const warnings = all
    .filter((e) => e.type === "harness.warning")
    .map((e) => (e.data as { message: string }).message)
    .filter((m) => m.includes("config.options.args"));
  expect(warnings).toEqual([
    expect.stringMatching(
      /^claude-code: config\.options\.args\[1\] puts a credential \(--api-key\) on the command line, where every local user can read it .*Give it in brain\.config\.json cli\.claude-code\.env instead/,
    ),
  ]);
  expect(JSON.stringify(all)).not.toContain(key);
});
