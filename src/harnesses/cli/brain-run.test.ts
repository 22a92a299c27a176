// `brain run --harness claude-code|codex|pi-cli|opencode …` end to end: the brain command, a brain.config.json that
// points the session's provider at the fake provider and puts each CLI behind the sandbox launcher, and the real
// CLI doing one shell-tool turn.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { shellAgent } from "../../testing/fake-provider/index.js";
import { type SandboxedProvider, startSandboxedProvider } from "../../testing/netns/sandbox.js";
import { locateCli } from "./locate.js";

vi.setConfig({ testTimeout: 240_000 });

const BRAIN = resolve(import.meta.dirname, "../../../bin/brain.js");
let sandbox: SandboxedProvider;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandboxedProvider();
  sandbox.provider.setFallback(shellAgent());
  dir = mkdtempSync(join(tmpdir(), "brain-run-cli-"));
  const cli = { launcher: sandbox.launcher };
  writeFileSync(
    join(dir, "brain.config.json"),
    JSON.stringify({
      cli: { "claude-code": cli, codex: cli, "pi-cli": cli, opencode: cli },
      // One base URL serves all four: the fake provider answers /v1/messages, /responses and /chat/completions.
      defaults: { provider: { base_url: sandbox.provider.url, api_key_env: "FAKE_PROVIDER_KEY" } },
    }),
  );
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ["claude-code", "claude"],
  ["codex", "codex"],
  ["pi-cli", "pi"],
  ["opencode", "opencode"],
])("brain run --harness %s", (harness, program) => {
  it.runIf(locateCli(program))("streams a shell-tool turn from the real CLI and exits 0", async () => {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [BRAIN, "run", "--harness", harness, "--model", "fake-model", "List the files here"],
      {
        cwd: dir,
        env: { PATH: process.env.PATH, BRAIN_HOME: join(dir, "home"), FAKE_PROVIDER_KEY: "sk-fake" },
      },
    );
    expect(stdout).toContain("done");
    expect(`${stdout}${stderr}`).toMatch(/ls -1/);
    expect(stderr).toMatch(/session [0-9a-f-]+/);
  });
});
