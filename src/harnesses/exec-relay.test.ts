// The exec shims as the host runs them (built, from dist/): the docker CLI they start reads Brain's docker config,
// never one planted under the command's HOME, which lies in the native dir a session's container writes.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../testing/brain.js";
import { docker, ensureDockerEngine } from "../testing/docker-engine.js";
import { fakeDocker, readCalls } from "../testing/nui.js";
import { dockerEnvFlags } from "./exec-relay.js";
import { devcontainerShim, dockerExecShim } from "./nui/install-paths.js";
import { BASE_IMAGE } from "./sandbox/docker-sandbox.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A HOME whose docker config sends every docker command to a Unix socket the agent serves; what it got. */
async function plantedContext(home: string): Promise<{ reached: () => boolean }> {
  const endpoint = join(home, "agent.sock");
  const name = "agent";
  const meta = join(home, ".docker/contexts/meta", createHash("sha256").update(name).digest("hex"));
  mkdirSync(meta, { recursive: true });
  const endpoints = { docker: { Host: `unix://${endpoint}`, SkipTLSVerify: false } };
  writeFileSync(join(meta, "meta.json"), JSON.stringify({ Name: name, Metadata: {}, Endpoints: endpoints }));
  writeFileSync(join(home, ".docker/config.json"), JSON.stringify({ currentContext: name }));
  let reached = false;
  const server = createServer((socket) => {
    reached = true;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(endpoint, resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { reached: () => reached };
}

describe("the docker sandbox's exec shim", () => {
  it.each([
    ["with Brain's docker config", true],
    ["with none given (an older launcher)", false],
  ])("runs docker exec %s, not the one the container wrote under the command's HOME", async (_, given) => {
    const home = tempDir("brain-shim-home-");
    const planted = await plantedContext(home);
    const config = tempDir("brain-docker-config-");
    const child = spawn(
      process.execPath,
      [
        dockerExecShim(),
        "--docker",
        "docker",
        ...(given ? ["--docker-config", config] : []),
        "--container",
        "c0ffee",
        "--",
        "true",
      ],
      // The CLI's environment as its harness builds it: HOME in the native dir, the provider key by name.
      { cwd: home, env: { PATH: process.env.PATH, HOME: home, PROVIDER_KEY: "sk-key" }, stdio: "ignore" },
    );
    await new Promise((resolve) => child.on("exit", resolve));
    expect(planted.reached()).toBe(false);
  });
});

/** What the fake docker's exec recorded: its own environment, and how its --env-file was kept. */
interface ExecSeen {
  cliEnv: NodeJS.ProcessEnv;
  envFile?: { path: string; mode: number; dirMode: number };
}

describe("the exec shims' docker", () => {
  /** The shim's words as its launcher gives them, with Brain's environment `brain`, and where the command runs. */
  function shimWords(which: string, brain: NodeJS.ProcessEnv): string[] {
    const flags = ["--docker", fakeDocker, ...dockerEnvFlags(brain), "--container", "c0ffee"];
    if (which === "sandbox") return [dockerExecShim(), ...flags];
    const workspace = tempDir("brain-shim-ws-");
    mkdirSync(join(workspace, ".devcontainer"));
    const json = { workspaceFolder: workspace, mounts: [] };
    writeFileSync(join(workspace, ".devcontainer/devcontainer.json"), JSON.stringify(json));
    return [devcontainerShim(), ...flags, "--workspace-folder", workspace];
  }

  it.each(["sandbox", "devcontainer"])(
    "(%s) goes to the daemon Brain's docker goes to, not the default one",
    async (which) => {
      const daemon = tempDir("brain-daemon-");
      const brain = { PATH: process.env.PATH, DOCKER_HOST: `unix://${daemon}/docker.sock` };
      const home = tempDir("brain-shim-home-");
      // The command's environment as its harness builds it: the runner protocol's minimal one, no DOCKER_HOST.
      const env = { PATH: process.env.PATH, HOME: home, PROVIDER_KEY: "sk-key" };
      const child = spawn(process.execPath, [...shimWords(which, brain), "--", "true"], {
        cwd: home,
        env,
        stdio: "ignore",
      });
      expect(await new Promise((resolve) => child.on("exit", resolve))).toBe(0);
      const execs = readCalls(daemon, "exec-env.jsonl") as unknown as ExecSeen[];
      // The command's and its guard's.
      expect(execs).toHaveLength(2);
      for (const each of execs) expect(each.cliEnv.DOCKER_HOST).toBe(brain.DOCKER_HOST);
    },
  );

  it.each(["sandbox", "devcontainer"])(
    "(%s) hands the session's variables to the container only, never to docker itself",
    async (which) => {
      const daemon = tempDir("brain-daemon-");
      const brain = { PATH: process.env.PATH, DOCKER_HOST: `unix://${daemon}/docker.sock` };
      const home = tempDir("brain-shim-home-");
      const seen = join(home, "seen");
      // Docker's own names among the session's: each would change where or how docker itself connects.
      const session = { DOCKER_CONTEXT: "agent", DOCKER_TLS_VERIFY: "1", PROVIDER_KEY: "sk-key" };
      const env = { PATH: process.env.PATH, HOME: home, ...session };
      const command = ["sh", "-c", 'echo "$DOCKER_CONTEXT $DOCKER_TLS_VERIFY $PROVIDER_KEY" > "$0"', seen];
      const child = spawn(process.execPath, [...shimWords(which, brain), "--", ...command], {
        cwd: home,
        env,
        stdio: "ignore",
      });
      expect(await new Promise((resolve) => child.on("exit", resolve))).toBe(0);
      expect(readFileSync(seen, "utf8")).toBe("agent 1 sk-key\n");
      const execs = readCalls(daemon, "exec-env.jsonl") as unknown as ExecSeen[];
      expect(execs).toHaveLength(2);
      // The guard, started first, may have been first to record: the command's is the one given a file.
      const exec = execs.find((each) => each.envFile);
      for (const { cliEnv } of execs) {
        for (const name of Object.keys(session)) expect(cliEnv[name]).toBeUndefined();
        expect(cliEnv.HOME).not.toBe(home);
      }
      // In a file only this user could read, gone once the command ended.
      expect(exec!.envFile).toMatchObject({ mode: 0o600, dirMode: 0o700 });
      expect(existsSync(exec!.envFile!.path)).toBe(false);
    },
  );
});

describe("a command the docker sandbox's exec shim runs in a container", () => {
  /** A container of the base image, and the shim started on `command` in it (its own group, as Brain starts it). */
  async function shimIn(command: string[]) {
    expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
    const container = docker("run", "-d", "--rm", BASE_IMAGE, "sleep", "600");
    cleanups.push(() => docker("rm", "-f", container));
    const shim = spawn(process.execPath, [dockerExecShim(), "--container", container, "--", ...command], {
      cwd: "/",
      detached: true,
      stdio: ["pipe", "pipe", "inherit"],
    });
    const exited = new Promise<number | null>((resolve) => shim.on("exit", (code) => resolve(code)));
    return { container, shim, exited };
  }

  /** True while a process running `args` is left in the container, asked up to 60 times, 250 ms apart. */
  async function stillThere(container: string, args: string): Promise<boolean> {
    for (let i = 0; i < 60; i++) {
      if (!docker("top", container).includes(args)) return false;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return true;
  }

  it.each([
    ["its whole group is killed on the host (SIGKILL)", (pid: number) => process.kill(-pid, "SIGKILL")],
    ["the shim alone is told to stop (SIGTERM)", (pid: number) => process.kill(pid, "SIGTERM")],
  ])(
    "ends inside when %s: docker exec passes no signal in",
    async (_, kill) => {
      const { container, shim, exited } = await shimIn(["sh", "-c", "echo up; sleep 299; echo done"]);
      await once(shim.stdout, "data");
      expect(docker("top", container)).toContain("sleep 299");
      kill(shim.pid as number);
      await exited;
      expect(await stillThere(container, "sleep 299")).toBe(false);
    },
    60_000,
  );

  it("passes a finished command's exit status through and its guard kills nothing", async () => {
    const { container, shim, exited } = await shimIn([
      "sh",
      "-c",
      "setsid sleep 298 </dev/null >/dev/null 2>&1 & exit 7",
    ]);
    shim.stdin.end();
    expect(await exited).toBe(7);
    // What the command left running on purpose is its own: only a shim that went first ends the group.
    expect(docker("top", container)).toContain("sleep 298");
  }, 60_000);
});
