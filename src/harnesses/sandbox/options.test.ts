// sandbox: docker's settings, without an engine: what an agent definition may say, what a session's options may
// say, and the one address a sandboxed CLI may reach; and, with a fake docker CLI, a `docker run` that times out.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkDefinition } from "../../agents/validate.js";
import type { HarnessOptions } from "../../core/harness.js";
import { tempDir } from "../../testing/brain.js";
import { fakeDocker, readCalls } from "../../testing/nui.js";
import { CLAUDE_CODE } from "../claude-code/factory.js";
import { CliFamilyFactory } from "../cli/family.js";
import { ContainerRecords } from "../http/container-records.js";
import { DockerCli } from "../http/docker-cli.js";
import { type DockerSandboxSettings, loopbackProviderPort, SandboxableFactory } from "./docker-sandbox.js";
import { sandboxOptions, withoutSandboxOptions } from "./options.js";

const agent = (harness: Record<string, unknown>) => ({ adl: "1.0", id: "a", name: "A", harness });

/** claude-code behind the docker sandbox on the fake engine `docker`, with no shim or install to mount. */
function sandboxed(docker: DockerCli, settings: Partial<DockerSandboxSettings> = {}): SandboxableFactory {
  const plain = new CliFamilyFactory(CLAUDE_CODE, {});
  return new SandboxableFactory(plain, () => plain, {
    shim: { node: "node", script: "shim.js" },
    installDir: "/nonexistent/brain",
    docker,
    ...settings,
  });
}

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
    // No base_url and no key: nothing it could reach (its own login's endpoint is off this host).
    expect(() => loopbackProviderPort(undefined, "codex")).toThrow(
      /no network, and its provider has no base_url and no api_key: nothing inside could reach a model/,
    );
    // One that calls no provider needs no way to one, wherever its base_url points.
    const none = { unproxied: "it talks to its provider itself", needsProvider: false };
    expect(loopbackProviderPort(undefined, "echo", none)).toEqual([]);
    expect(loopbackProviderPort("https://api.example.com", "echo", none)).toEqual([]);
    expect(() => loopbackProviderPort("https://api.example.com", "codex")).toThrow(
      /no network, and its provider https:\/\/api.example.com is not on this host's loopback/,
    );
  });

  it("lets a CLI that goes through the credential proxy use a provider elsewhere, bridging none of its ports", () => {
    const remote = "https://api.example.com";
    expect(loopbackProviderPort(remote, "codex", { unproxied: undefined })).toEqual([]);
    expect(() => loopbackProviderPort(remote, "codex", { unproxied: "the provider has no api_key" })).toThrow(
      /not on this host's loopback; Brain's credential proxy could reach it from this host, but the provider has no api_key/,
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

describe("a sandbox's docker run that does not return", () => {
  let state = "";
  afterEach(() => {
    // An agent the fake started and nothing removed (what the test is about) is stopped, then its state goes.
    for (const file of readdirSync(join(state, "containers"))) {
      try {
        process.kill(-Number(file.replace(/^fake|\.json$/g, "")), "SIGTERM");
      } catch {
        // already gone
      }
    }
    rmSync(state, { recursive: true, force: true });
  });

  it("removes the container the run started, and says the run timed out", async () => {
    state = tempDir("fake-docker-");
    // The fake's run starts the container, says only Docker's warning, and never returns.
    const docker = new DockerCli(fakeDocker, {
      ...process.env,
      FAKE_DOCKER_STATE: state,
      FAKE_DOCKER_SLOW_RUN: "1",
    });
    const factory = sandboxed(docker, { runMs: 5_000 });
    const dir = tempDir("brain-sandbox-native-");
    const options = {
      sessionId: "s-timeout",
      dir,
      provider: { base_url: "http://127.0.0.1:9/v1" },
      config: { options: { sandbox: "docker", sandbox_image: "seed-echo" } },
    } as never;
    await expect(factory.open(options)).rejects.toThrow(
      /docker\.mjs run timed out after 5s \(it said: WARNING: IPv4 forwarding is disabled/,
    );
    rmSync(dir, { recursive: true, force: true });
    expect(readdirSync(join(state, "containers"))).toEqual([]);
    const calls = readFileSync(join(state, "calls.jsonl"), "utf8");
    expect(calls.split("\n").filter((l) => l.startsWith('["rm"'))).toHaveLength(1);
  });
});

describe("a sandboxed CLI with no way to a provider", () => {
  it("is refused before docker run, naming the fixes, when the provider has no key and no base_url", async () => {
    const state = tempDir("fake-docker-");
    const factory = sandboxed(new DockerCli(fakeDocker, { ...process.env, FAKE_DOCKER_STATE: state }));
    const dir = tempDir("brain-sandbox-native-");
    const options = {
      sessionId: "s-keyless",
      dir,
      provider: {},
      config: { options: { sandbox: "docker", sandbox_image: "seed-echo" } },
    } as never;
    await expect(factory.open(options)).rejects.toThrow(
      `harness "claude-code" with sandbox: docker runs with no network, and its provider has no base_url and no api_key: nothing inside could reach a model (the provider has no api_key, so the CLI talks to it itself); point the provider's base_url at a loopback proxy or model server (http://127.0.0.1:PORT), give the provider an api_key for Brain's credential proxy to use, or drop the sandbox`,
    );
    expect(readCalls(state).filter((call) => call[0] === "run")).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
  });
});

describe("a sandbox's working directory", () => {
  it("is refused before docker run when it holds Brain's home or lies inside it, naming the option", async () => {
    const user = tempDir("brain-sandbox-user-");
    const home = join(user, ".brain");
    const native = join(home, "sessions", "s-home", "native");
    const other = join(home, "sessions", "s-other", "native");
    mkdirSync(native, { recursive: true });
    mkdirSync(other, { recursive: true });
    const state = tempDir("fake-docker-");
    const factory = sandboxed(new DockerCli(fakeDocker, { ...process.env, FAKE_DOCKER_STATE: state }), {
      records: new ContainerRecords(home),
    });
    const open = (cwd: string) =>
      factory.open({
        sessionId: "s-home",
        dir: native,
        provider: { base_url: "http://127.0.0.1:9/v1" },
        config: { options: { sandbox: "docker", sandbox_image: "seed-echo", cwd } },
      } as never);
    await expect(open(user)).rejects.toThrow(
      `harness "claude-code": config.options.cwd "${user}" holds Brain's home ${home}`,
    );
    // Another session's files are Brain's home too.
    await expect(open(other)).rejects.toThrow(
      /config\.options\.cwd ".*s-other\/native" is inside Brain's home/,
    );
    const calls = existsSync(join(state, "calls.jsonl"))
      ? readFileSync(join(state, "calls.jsonl"), "utf8")
      : "";
    expect(calls).not.toContain('["run"');
    rmSync(user, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
  });
});
