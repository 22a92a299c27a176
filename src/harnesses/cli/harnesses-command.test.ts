// `brain harnesses` reports each CLI family: whether its program is found and its version (asked in a network
// namespace, as every test that starts a real CLI does); and the config's `cli` block is checked strictly.
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it, vi } from "vitest";
import { unshareWords } from "../../testing/netns/sandbox.js";
import { locateCli } from "./locate.js";

vi.setConfig({ testTimeout: 120_000 });

const BRAIN = resolve(import.meta.dirname, "../../../bin/brain.js");
const dir = mkdtempSync(join(tmpdir(), "brain-harnesses-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function brain(args: string[], config: unknown) {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(config));
  return promisify(execFile)(process.execPath, [BRAIN, ...args, "--config", file], {
    env: { PATH: process.env.PATH, BRAIN_HOME: join(dir, "home") },
  });
}

describe("brain harnesses", () => {
  it("lists each CLI family with its program's version and path, or says it is not found", async () => {
    const sandboxed = { launcher: unshareWords() };
    const { stdout } = await brain(["harnesses"], {
      cli: {
        "claude-code": sandboxed,
        codex: sandboxed,
        "pi-cli": sandboxed,
        opencode: { bin: "/nonexistent/opencode" },
      },
    });
    for (const [harness, program] of [
      ["claude-code", "claude"],
      ["codex", "codex"],
      ["pi-cli", "pi"],
    ] as const) {
      const path = locateCli(program);
      if (!path) continue;
      expect(stdout).toMatch(new RegExp(`^${harness} +${program} \\d+\\.\\d+\\.\\d+\\S* +${path}$`, "m"));
    }
    expect(stdout).toMatch(/^opencode +\/nonexistent\/opencode not found$/m);
    expect(stdout).toMatch(/^echo$/m);
  });

  it("takes an npm-installed CLI's version from its package's manifest, without starting it", async () => {
    // A claude-code package whose program would answer --version otherwise, and leaves a mark when started.
    const pkg = join(dir, "node_modules", "@anthropic-ai", "claude-code");
    mkdirSync(join(pkg, "bin"), { recursive: true });
    writeFileSync(
      join(pkg, "package.json"),
      JSON.stringify({ name: "@anthropic-ai/claude-code", version: "9.8.7" }),
    );
    const program = join(pkg, "bin", "claude");
    const mark = join(dir, "started");
    writeFileSync(program, `#!/bin/sh\ntouch ${mark}\necho 1.0.0\n`);
    chmodSync(program, 0o755);
    // The same script outside any package of that name: its version comes from starting it.
    const loose = join(dir, "loose-codex");
    writeFileSync(loose, "#!/bin/sh\necho 'codex-cli 4.5.6'\n");
    chmodSync(loose, 0o755);
    const { stdout } = await brain(["harnesses"], {
      cli: { "claude-code": { bin: program }, codex: { bin: loose } },
    });
    expect(stdout).toMatch(new RegExp(`^claude-code +${program} 9\\.8\\.7 +${program}$`, "m"));
    expect(stdout).toMatch(new RegExp(`^codex +${loose} 4\\.5\\.6 +${loose}$`, "m"));
    expect(existsSync(mark)).toBe(false);
  });

  it("refuses a cli block with an unknown family or field, naming it", async () => {
    const run = brain(["harnesses"], { cli: { claude: { bin: "claude" } } });
    await expect(run).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown field "cli.claude": the fields here are claude-code/),
    });
    const field = brain(["harnesses"], { cli: { codex: { binary: "codex" } } });
    await expect(field).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown field "cli.codex.binary"/),
    });
  });
});
