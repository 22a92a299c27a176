// sandbox: docker's settings, without an engine: what an agent definition may say, what a session's options may
// say, and the one address a sandboxed CLI may reach.
import { describe, expect, it } from "vitest";
import { checkDefinition } from "../../agents/validate.js";
import type { HarnessOptions } from "../../core/harness.js";
import { CLAUDE_CODE } from "../claude-code/factory.js";
import { CliFamilyFactory } from "../cli/family.js";
import { loopbackProviderPort, SandboxableFactory } from "./docker-sandbox.js";
import { sandboxOptions, withoutSandboxOptions } from "./options.js";

const agent = (harness: Record<string, unknown>) => ({ adl: "1.0", id: "a", name: "A", harness });

describe("sandbox: docker", () => {
  it("is accepted in an agent definition for the CLI agents it runs, and refused elsewhere with the fix", () => {
    for (const type of ["claude-code", "codex", "pi-cli", "opencode"]) {
      expect(checkDefinition(agent({ type, sandbox: "docker" }), { requireAdl: true })).toMatchObject({
        ok: true,
        ignored: [],
      });
    }
    const api = checkDefinition(agent({ type: "api", sandbox: "docker" }), { requireAdl: true });
    expect(api.ok ? [] : api.problems).toContainEqual({
      field: "harness.sandbox",
      message: expect.stringMatching(
        /runs claude-code, codex, pi-cli, opencode in a container, not "api"; .*devcontainer/,
      ),
    });
    const gvisor = checkDefinition(agent({ type: "codex", sandbox: "gvisor" }), { requireAdl: true });
    expect(gvisor.ok ? [] : gvisor.problems[0]?.message).toMatch(
      /"gvisor" is not a sandbox Brain runs; use docker/,
    );
  });

  it("reads the session's options, and takes its own keys out before the harness sees them", () => {
    expect(sandboxOptions({ cwd: "/w" }, "codex")).toEqual({ sandbox: "none", cwd: "/w" });
    expect(() => sandboxOptions({ sandbox: "vm" }, "codex")).toThrow(/sandbox: .*"none" or "docker"/);
    const options = { config: { options: { sandbox: "docker", sandbox_image: "x", cwd: "/w" } } } as never;
    expect(withoutSandboxOptions(options as HarnessOptions).config.options).toEqual({ cwd: "/w" });
  });

  it("lets the CLI reach its provider only on this host's loopback", () => {
    expect(loopbackProviderPort("http://127.0.0.1:4010/v1", "codex")).toEqual([4010]);
    expect(loopbackProviderPort(undefined, "codex")).toEqual([]);
    expect(() => loopbackProviderPort("https://api.example.com", "codex")).toThrow(
      /no network, and its provider https:\/\/api.example.com is not on this host's loopback/,
    );
  });

  it("refuses a harness that cannot run in it yet, naming why", async () => {
    const factory = new SandboxableFactory(new CliFamilyFactory(CLAUDE_CODE, {}), () => undefined as never, {
      shim: { node: "node", script: "shim.js" },
      installDir: "/",
      unsupported: "no reason",
    });
    const options = { config: { options: { sandbox: "docker" } } } as never;
    await expect(factory.open(options)).rejects.toThrow(/cannot run with sandbox: docker yet: no reason/);
  });
});
