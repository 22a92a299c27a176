// A network caller sets only the session options that tune its harness: what reaches the host (an image, a URL, a
// directory, flags, environment), what rides beside the operator's key or changes what its sessions are counted
// at, is the operator's, set in agent definitions and defaults.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinCatalog, catalogHarnesses } from "../harnesses/catalog.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { raw } from "../testing/http.js";

describe("session options only the operator sets", () => {
  // The real catalog, with a docker program that records being run: no image, flag, URL or directory a client
  // sends may reach the host. The operator sets those in agent definitions; clients name the agent.
  let daemon: TestDaemon;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "brain-options-"));
    const docker = join(dir, "docker");
    writeFileSync(docker, `#!/bin/sh\necho "$@" >> ${join(dir, "ran")}\n`, { mode: 0o755 });
    const { factories } = catalogHarnesses(builtinCatalog(), {
      config: { nui: { docker } },
      configDir: dir,
      brainHome: dir,
    });
    daemon = await startTestDaemon({ factories });
  });
  afterAll(async () => {
    await daemon.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ["docker", { image: "alpine", containerPort: 80, docker_args: ["-v", "/:/host"] }, "image"],
    ["remote", { url: "http://169.254.169.254/latest" }, "url"],
    ["claude-code", { cwd: "/" }, "cwd"],
    ["codex", { args: ["-c", "sandbox_mode=danger-full-access"] }, "args"],
    ["devcontainer", { innerHarness: "claude-code", image: "evil" }, "innerHarness"],
    ["api", { temperature: 0, env: { NODE_OPTIONS: "--require ./x.js" } }, "env"],
    ["api", { temperature: 0, headers: { "OpenAI-Project": "proj_another_team" } }, "headers"],
    ["api", { temperature: 0, price: { input: 0, output: 0 } }, "price"],
    ["pi", { max_tokens: 100, compat: { supportsUsageInStreaming: false } }, "compat"],
  ])("a client cannot set %s's %j", async (harness, options, field) => {
    const res = await raw(daemon.url, "POST", "/v1/sessions", {
      token: daemon.tokens.admin,
      body: { harness, config: { options } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatchObject({ code: "bad_request", field: `config.options.${field}` });
    expect(String((res.body.error as { message: string }).message)).toContain("set by the operator only");
    expect(existsSync(join(dir, "ran"))).toBe(false);
  });

  it.each([
    ["api", { temperature: 0.5, max_steps: 3 }],
    ["pi", { max_tokens: 100, thinking: "low" }],
  ])("lets a client tune what only tunes %s", async (harness, options) => {
    const body = { harness, config: { options } };
    const res = await raw(daemon.url, "POST", "/v1/sessions", { token: daemon.tokens.admin, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});
