// The devcontainer family without a Docker engine: the generated devcontainer.json and the exact commands are
// checked, and a fake Dev Container CLI runs the inner harness (the echo runner) "inside" by running it here
// with only the container's environment.
import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BrainConfig } from "../../protocol/config.js";
import type { ProviderCredentials } from "../../protocol/runner.js";
import { events, makeBrain, type TestBrain, tempDir, textOf } from "../../testing/brain.js";
import { catalogFactories, fakeDevcontainer, fakeDocker, readCalls } from "../../testing/nui.js";
import { dockerEnvFlags, hostDockerConfig } from "../exec-relay.js";
import { containerLimits, limitArgs } from "../http/container-limits.js";
import { devcontainerShim, installDir } from "../nui/install-paths.js";
import { echoRunnerPath } from "../process/descriptor.js";
import { DEFAULT_DEVCONTAINER_IMAGE } from "./config.js";
import { DevcontainerFactory, type DevcontainerSettings } from "./factory.js";

let t: TestBrain | undefined;
let state: string;
beforeEach(() => {
  state = tempDir("fake-devcontainer-");
  process.env.FAKE_DOCKER_STATE = state;
  // The exec shim's docker has Brain's DOCKER_HOST, not FAKE_DOCKER_STATE: the fake finds its state by the socket.
  process.env.DOCKER_HOST = `unix://${state}/docker.sock`;
});
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  delete process.env.FAKE_DOCKER_STATE;
  delete process.env.DOCKER_HOST;
  delete process.env.FAKE_DOCKER_DOWN;
  delete process.env.FAKE_DEVCONTAINER_FAIL_UP;
  rmSync(state, { recursive: true, force: true });
});

type NuiSettings = Record<string, string>;

/** The `docker exec` that ran the inner harness's command (in its working dir), not its guard's. */
const commandExec = (calls: string[][]) => calls.find((call) => call[0] === "exec" && call[2] === "-w")!;

function brain(
  settings: NuiSettings = { devcontainer: fakeDevcontainer, docker: fakeDocker },
  cli?: BrainConfig["cli"],
  host: { uid?: number; provider?: ProviderCredentials; home?: string } = {},
) {
  const home = host.home ?? tempDir("brain-devc-home-");
  const { factories } = catalogFactories({
    brainHome: home,
    nui: settings,
    configDir: home,
    ...(cli ? { cli } : {}),
    harnesses: {
      echo: {
        command: [process.execPath, echoRunnerPath()],
        env: { FAKE_DOCKER_STATE: state },
        needs_provider: false,
      },
    },
  });
  const found = factories.filter((f) => f.name === "devcontainer");
  const { uid, provider } = host;
  t = makeBrain({
    // The catalog's factory, as a host user other than this test's would have it.
    factories:
      uid === undefined
        ? found
        : found.map(
            (f) =>
              new DevcontainerFactory({
                ...(f as unknown as { settings: DevcontainerSettings }).settings,
                uid,
              }),
          ),
    ...(provider ? { provider } : {}),
    ...(host.home ? { home } : {}),
  });
  return t.brain;
}

describe("a session in a dev container", () => {
  it("runs devcontainer up, the inner harness through docker exec, and removes the container on close", async () => {
    const b = brain();
    const session = await b.create({
      harness: "devcontainer",
      config: { options: { innerHarness: "echo" } },
    });
    const turn = await session.prompt("inside");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    expect(textOf(await events(session), turn.turn)).toBe("echo #1: inside");
    const manifest = await session.checkpoint();
    expect(manifest.files.length).toBeGreaterThan(0);
    expect(manifest.files.every((f) => f.path.startsWith("inner/"))).toBe(true);

    const native = join(t!.home, "sessions", session.id, "native");
    const workspace = join(native, "devcontainer");
    const inner = join(native, "inner");
    const json = JSON.parse(readFileSync(join(workspace, ".devcontainer/devcontainer.json"), "utf8"));
    expect(json).toMatchObject({
      name: `brain-session-${session.id}`,
      image: DEFAULT_DEVCONTAINER_IMAGE,
      // Of the native dir, only the inner harness's part is mounted: the devcontainer.json is out of reach.
      workspaceFolder: inner,
      workspaceMount: `source=${inner},target=${inner},type=bind`,
      overrideCommand: true,
      updateRemoteUserUID: false,
      // The session's id and Brain's home: another Brain on the engine may have a session of the same id. And
      // its run's, recorded before `up` (a Brain killed during it leaves the next start a way to find it).
      runArgs: [
        "--label",
        `brain.session=${session.id}`,
        "--label",
        expect.stringMatching(/^brain\.home=\/.*brain-devc-home-/),
        "--label",
        "brain.harness=devcontainer",
        "--label",
        expect.stringMatching(/^brain\.run=[0-9a-f-]{36}$/),
        "--network",
        "none",
        ...limitArgs(containerLimits(undefined)),
      ],
    });
    // The tool endpoint's private dir, and Brain's install read-only.
    expect(json.mounts[0]).toMatch(/^source=(\/.*brain-sandbox-\w+\/tools),target=\1,type=bind$/);
    expect(JSON.stringify(json.mounts)).not.toContain(native);
    expect(json.mounts).toContain(`source=${installDir()},target=${installDir()},type=bind,readonly`);
    expect(JSON.stringify(json)).not.toContain(state);

    await t!.brain.closeSession(session.id);
    expect(readCalls(state, "devcontainer-calls.jsonl")).toEqual([["up", "--workspace-folder", workspace]]);
    const docker = readCalls(state);
    expect(docker[0]).toEqual(["info", "--format", "{{.ServerVersion}}"]);
    const home = expect.stringMatching(/^label=brain\.home=\/.*brain-devc-home-/);
    const ps = ["ps", "-aq", "--filter", `label=brain.session=${session.id}`, "--filter", home];
    expect([docker[1]?.[0], docker[2]]).toEqual(["image", ps]); // the image's metadata looked at first
    // The runner runs through `docker exec` into the container `up` made; what its environment held goes by name.
    const exec = commandExec(docker);
    expect(exec.slice(0, 4)).toEqual(["exec", "-i", "-w", inner]);
    expect(exec.slice(-2)).toEqual(["node", echoRunnerPath()]);
    // Beside it, its guard: the command is ended inside when the shim that ran it goes (src/harnesses/exec-relay.ts).
    const guard = docker.find((call) => call[0] === "exec" && call !== exec)!;
    expect(guard.slice(0, 7)).toEqual(["exec", "-i", "-u", "root", "devc0ffee", "sh", "-c"]); // as up's remoteUser
    // What its environment held goes in a file, not by name through docker's own environment.
    expect(exec).toContain("--env-file");
    expect(exec).not.toContain("-e");
    expect(JSON.stringify(exec)).not.toContain(state);
    expect(docker.at(-1)).toEqual(["rm", "-f", "-v", "devc0ffee"]);
  });

  it("uses the given image and working dir as the container's workspace", async () => {
    const work = tempDir("brain-devc-work-");
    const b = brain();
    const session = await b.create({
      harness: "devcontainer",
      config: { options: { innerHarness: "echo", image: "my/image:1", working_dir: work } },
    });
    expect((await (await session.prompt("x")).settled).status).toBe("completed");
    const json = JSON.parse(
      readFileSync(
        join(t!.home, "sessions", session.id, "native/devcontainer/.devcontainer/devcontainer.json"),
        "utf8",
      ),
    );
    expect(json).toMatchObject({
      image: "my/image:1",
      workspaceFolder: work,
      workspaceMount: `source=${work},target=${work},type=bind`,
    });
    rmSync(work, { recursive: true, force: true });
  });

  it("a link planted in the workspace folder makes the host read or write nothing outside it", async () => {
    const outside = tempDir("brain-devc-outside-");
    const secret = join(outside, "tokens.json");
    const victim = join(outside, "victim.json");
    writeFileSync(secret, '{"admin":"SECRET-ADMIN-TOKEN"}');
    writeFileSync(victim, "precious\n");
    let b = brain();
    const session = await b.create({
      harness: "devcontainer",
      config: { options: { innerHarness: "echo" } },
    });
    expect((await (await session.prompt("one")).settled).status).toBe("completed");
    const workspace = join(t!.home, "sessions", session.id, "native/devcontainer");
    const config = join(workspace, ".devcontainer/devcontainer.json");
    const home = t!.home;
    await t!.brain.close();

    // The exec shim, run by the host on each start of the inner command, follows neither link.
    rmSync(config);
    symlinkSync(secret, config);
    symlinkSync(victim, `${config}.tmp`);
    const runShim = () =>
      spawnSync(
        process.execPath,
        [
          devcontainerShim(),
          "--docker",
          "/bin/true",
          "--container",
          "c1",
          "--workspace-folder",
          workspace,
          "--",
          "x",
        ],
        { encoding: "utf8" },
      );
    const shim = runShim();
    expect(shim.status).toBe(1);
    expect(shim.stderr).toMatch(/^brain devcontainer exec: .*devcontainer\.json is a symbolic link/);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    expect(readFileSync(secret, "utf8")).toBe('{"admin":"SECRET-ADMIN-TOKEN"}');

    // A link for the folder the file is in: the shim neither reads a host file through it nor writes one there.
    const hostJson = '{"workspaceFolder":"/host","mounts":[],"remoteEnv":{}}';
    writeFileSync(join(outside, "devcontainer.json"), hostJson);
    rmSync(join(workspace, ".devcontainer"), { recursive: true });
    symlinkSync(outside, join(workspace, ".devcontainer"));
    const throughLink = runShim();
    expect(throughLink.status).toBe(1);
    expect(throughLink.stderr).toMatch(
      /devcontainer\/\.devcontainer is a symbolic link, not a file Brain wrote/,
    );
    expect(readFileSync(join(outside, "devcontainer.json"), "utf8")).toBe(hostJson);
    expect(readdirSync(outside).sort()).toEqual(["devcontainer.json", "tokens.json", "victim.json"]);

    // What an earlier container could leave there (when the whole native dir was mounted) is replaced on open.
    b = brain(undefined, undefined, { home });
    const again = await b.session(session.id);
    expect((await (await again.prompt("two")).settled).status).toBe("completed");
    expect(lstatSync(config).isFile()).toBe(true);
    expect(readFileSync(config, "utf8")).not.toContain("SECRET");
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    rmSync(outside, { recursive: true, force: true });
  });

  it("refuses a working_dir that would mount the session's native dir", async () => {
    const b = brain();
    const session = await b.create({
      harness: "devcontainer",
      config: { options: { innerHarness: "echo", working_dir: t!.home } },
    });
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.error?.message).toMatch(
      /config\.options\.working_dir ".*" would mount .*\/native\/devcontainer into the container.*choose a directory outside .*\/native, or none for .*\/native\/inner$/,
    );
    // A comma would end the bind's source in Docker's --mount, and what follows would be fields of its own.
    const options = { innerHarness: "echo", working_dir: "/w,source=/" };
    const comma = await b.create({ harness: "devcontainer", config: { options } });
    expect((await (await comma.prompt("x")).settled).error?.message).toMatch(
      /config\.options: working_dir: must not contain a comma/,
    );
    expect(readCalls(state, "devcontainer-calls.jsonl")).toEqual([]);
  });

  it("the launcher puts the exec shim in front of the inner command", () => {
    const { factories } = catalogFactories({
      brainHome: tempDir("x-"),
      nui: { devcontainer: "/opt/dc" },
    });
    const factory = factories.find((f) => f.name === "devcontainer") as unknown as {
      launcher(container: string, dir: string): string[];
    };
    expect(factory.launcher("c0ffee", "/ws")).toEqual([
      process.execPath,
      devcontainerShim(),
      "--docker",
      "docker",
      "--docker-config",
      hostDockerConfig(),
      // Where Brain's own docker finds its daemon: the command's environment does not say.
      ...dockerEnvFlags(),
      "--container",
      "c0ffee",
      "--workspace-folder",
      "/ws",
      "--",
    ]);
  });
});

describe("a CLI family inside", () => {
  it("innerHarness: claude-code resolves to the claude-code family, its program run through docker exec", async () => {
    // A stand-in for claude that says who it is and fails: what is checked is that Brain ran it inside.
    const bin = join(tempDir("brain-devc-bin-"), "claude");
    writeFileSync(bin, '#!/bin/sh\necho "fake claude ran: $*" >&2\nexit 3\n');
    chmodSync(bin, 0o755);
    const b = brain(undefined, { "claude-code": { bin, env: { FAKE_DOCKER_STATE: state } } });
    // Docker's network: a keyless CLI in a network: "none" one is refused before up, with no provider to reach.
    const session = await b.create({
      harness: "devcontainer",
      config: { options: { innerHarness: "claude-code", network: "bridge" } },
    });
    const outcome = await (await session.prompt("x")).settled;
    // Before the catalog, the devcontainer family knew no CLI family: "cannot run in a dev container".
    expect(outcome.error?.message).toMatch(/claude exited with code 3; .*fake claude ran: -p /);
    expect(readCalls(state, "devcontainer-calls.jsonl").map((call) => call[0])).toEqual(["up"]);
    // Run in its working dir (mounted inside), not the container's workspace folder.
    const work = join(t!.home, "sessions", session.id, "native/inner/work");
    const exec = commandExec(readCalls(state));
    expect(exec.slice(0, 4)).toEqual(["exec", "-i", "-w", work]);
    expect(exec.slice(exec.indexOf(bin), exec.indexOf(bin) + 2)).toEqual([bin, "-p"]);
  });

  it("every CLI family of the catalog can be an innerHarness", () => {
    const { factories } = catalogFactories({ brainHome: tempDir("x-"), nui: { devcontainer: "/opt/dc" } });
    const factory = factories.find((f) => f.name === "devcontainer") as unknown as {
      settings: { inner(name: string, launcher: string[]): { name: string } | undefined };
    };
    for (const name of ["claude-code", "codex", "pi-cli", "opencode"]) {
      expect(factory.settings.inner(name, ["launch"])?.name).toBe(name);
    }
  });
});

describe("what is missing is named", () => {
  async function failure(options: Record<string, unknown>, settings?: NuiSettings) {
    const b = brain(settings);
    const session = await b.create({ harness: "devcontainer", config: { options } });
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.status).toBe("failed");
    return outcome.error?.message ?? "";
  }

  it("the Dev Container CLI, Docker, a running Docker daemon", async () => {
    expect(
      await failure(
        { innerHarness: "echo" },
        { devcontainer: "/nonexistent/devcontainer", docker: fakeDocker },
      ),
    ).toMatch(
      /needs the Dev Container CLI: program "\/nonexistent\/devcontainer" does not exist.*npm install -g @devcontainers\/cli/,
    );
    await t?.cleanup();
    expect(
      await failure(
        { innerHarness: "echo" },
        { devcontainer: fakeDevcontainer, docker: "no-such-docker-cli" },
      ),
    ).toMatch(/needs Docker: program "no-such-docker-cli" is not on PATH.*install Docker/);
    await t?.cleanup();
    process.env.FAKE_DOCKER_DOWN = "1";
    expect(await failure({ innerHarness: "echo" })).toMatch(/Docker is not running or not reachable/);
  });

  it("Brain not running as root: what to change, before any container starts", async () => {
    const refused = async (options: Record<string, unknown>, provider?: ProviderCredentials) => {
      const b = brain(undefined, undefined, { uid: 1000, ...(provider ? { provider } : {}) });
      const session = await b.create({ harness: "devcontainer", config: { options } });
      const outcome = await (await session.prompt("x")).settled;
      expect(readCalls(state, "devcontainer-calls.jsonl")).toEqual([]);
      await t?.cleanup();
      return outcome.error?.message ?? "";
    };
    // pi calls its provider (echo calls none, and needs no way to one): its port is bridged in.
    expect(await refused({ innerHarness: "pi" }, { base_url: "http://127.0.0.1:9/v1" })).toMatch(
      /Brain runs as uid 1000, not root, and a network: "none" container reaches its provider on this host's loopback \(port 9\) through the container's network namespace \(nsenter\), which needs root; run Brain as root, or set network: "bridge"/,
    );
    const owner =
      /Brain runs as uid 1000, not root, and the container's commands would run as the image's user .*; set remoteUser \(an agent definition's harness.remoteUser\) to a user of the image whose uid is 1000/;
    expect(await refused({ innerHarness: "echo" })).toMatch(owner);
    expect(await refused({ innerHarness: "echo", network: "bridge" })).toMatch(owner);
    // With a user of the image named, it runs.
    const b = brain(undefined, undefined, { uid: 1000 });
    const session = await b.create({
      harness: "devcontainer",
      config: { options: { innerHarness: "echo", network: "bridge", remoteUser: "node" } },
    });
    expect(await (await session.prompt("inside")).settled).toMatchObject({ status: "completed" });
    // So is one the image's devcontainer.metadata label names: the commands run as it all the same.
    await t?.cleanup();
    process.env.FAKE_DOCKER_IMAGE_LABEL = JSON.stringify([{ remoteUser: "node" }]);
    try {
      const labelled = await brain(undefined, undefined, { uid: 1000 }).create({
        harness: "devcontainer",
        config: { options: { innerHarness: "echo", network: "bridge" } },
      });
      expect(await (await labelled.prompt("inside")).settled).toMatchObject({ status: "completed" });
    } finally {
      delete process.env.FAKE_DOCKER_IMAGE_LABEL;
    }
  });

  it("a failed devcontainer up, an unknown or missing innerHarness", async () => {
    process.env.FAKE_DEVCONTAINER_FAIL_UP = "1";
    expect(await failure({ innerHarness: "echo" })).toMatch(
      /devcontainer up --workspace-folder .* failed: Command failed: docker run: no space left on device/,
    );
    await t?.cleanup();
    expect(await failure({ innerHarness: "vim" })).toMatch(
      /innerHarness "vim" cannot run in a dev container; known: acp:claude, acp:codex, acp:gemini, claude-code, codex, echo, opencode, pi, pi-cli$/,
    );
    await t?.cleanup();
    expect(await failure({})).toMatch(
      /innerHarness: .*set innerHarness \(an agent definition's harness\.innerHarness/,
    );
  });
});
