// The devcontainer harness on a real Docker engine with the real Dev Container CLI (the pinned
// @devcontainers/cli): `devcontainer up` of the generated devcontainer.json on the project's local base image (no
// registry), the inner harness started through `devcontainer exec` and reaching only the fake provider on this
// host's loopback (the container has no network), and the container removed on close.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { events, tempDir, textOf } from "../../testing/brain.js";
import { type CliBed, cliBed, FAKE_KEY } from "../../testing/cli.js";
import {
  checkKeyNotInAgent,
  checkProviderOnlyThroughProxy,
  checkTokensApart,
} from "../../testing/cli-credentials.js";
import {
  devcontainerCliOffline,
  docker,
  ensureDockerEngine,
  imageWithMetadata,
  sessionContainers,
} from "../../testing/docker-engine.js";
import { catalogFactories } from "../../testing/nui.js";
import { locateCli } from "../cli/locate.js";
import { containerRecordsDir } from "../http/container-records.js";
import { devcontainerShim } from "../nui/install-paths.js";
import { BASE_IMAGE } from "../sandbox/docker-sandbox.js";

// opencode's 185 MB binary can take tens of seconds to start on a loaded machine.
vi.setConfig({ testTimeout: 400_000, hookTimeout: 600_000 });

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
  expect(locateCli("devcontainer"), "the pinned @devcontainers/cli (npm install)").toBeDefined();
});

beforeEach(devcontainerCliOffline);

let bed: CliBed | undefined;
afterEach(async () => {
  await bed?.close();
  bed = undefined;
});

async function devcontainerBed(provider: { path?: string; model?: string } = {}) {
  const brainHome = tempDir("brain-devc-real-");
  const { factories } = catalogFactories({ brainHome });
  const factory = factories.find((f) => f.name === "devcontainer")!;
  // The bed's network-namespace launcher is not used: the container is the sandbox.
  bed = await cliBed(() => factory, provider);
  return { ...bed, records: containerRecordsDir(brainHome) };
}

/** Every host process's command line (any user on this host may read them). */
function commandLines(): { pid: string; argv: string[] }[] {
  return readdirSync("/proc")
    .filter((pid) => /^\d+$/.test(pid))
    .flatMap((pid) => {
      try {
        return [{ pid, argv: readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0") }];
      } catch {
        return []; // gone meanwhile
      }
    });
}

function session(b: CliBed, innerHarness: string) {
  return b.create({ config: { options: { innerHarness, image: BASE_IMAGE } } });
}

describe.runIf(locateCli("claude"))("a dev container on the real engine", () => {
  it("runs claude-code inside: a shell tool call in the container, then text from the fake provider; removed on close", async () => {
    const b = await devcontainerBed();
    const s = await session(b, "claude-code");
    const native = b.t.store.paths(s.id).native;
    const turn = await s.prompt(
      `Look around CMD[hostname; cat /proc/1/cmdline | tr '\\0' ' '; ip -o link; pwd; echo NATIVE=$(ls -A ${native} | tr '\\n' ,)]`,
    );
    expect(await turn.settled).toMatchObject({ status: "completed" });
    const [id] = sessionContainers(s.id);
    expect(id).toBeDefined();
    expect(docker("inspect", "-f", "{{.HostConfig.NetworkMode}}", id!)).toBe("none");
    expect(docker("inspect", "-f", "{{.Config.Image}}", id!)).toBe(BASE_IMAGE);
    const all = await events(s);
    expect(all.find((e) => e.type === "tool.call")?.data).toMatchObject({ name: "Bash" });
    const output = JSON.stringify(all.filter((e) => e.type === "tool.result"));
    expect(output).toContain(id!.slice(0, 12)); // the container's hostname
    expect(output).toContain("Container started"); // the Dev Container CLI's init
    expect(output).not.toMatch(/eth0/);
    expect(output).toContain(join(native, "inner", "work")); // its own working dir
    // Of the native dir only `inner` is inside: the devcontainer.json the host rewrites is out of reach.
    expect(output).toContain("NATIVE=inner,");
    expect(textOf(all, turn.turn)).toContain("done");
    // The model was this host's fake provider, reached from inside.
    expect(b.sandbox.provider.requests.length).toBeGreaterThan(0);
    await b.t.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
  });

  it("runs claude-code inside in bound tool mode: Brain's echo through the session's tool endpoint, from inside", async () => {
    const b = await devcontainerBed();
    const s = await b.create({
      config: {
        tool_mode: "bound",
        tools: ["echo"],
        options: { innerHarness: "claude-code", image: BASE_IMAGE },
      },
    });
    const turn = await s.prompt('Echo it CALL mcp__brain__echo {"value":"from the container"}');
    expect(await turn.settled).toMatchObject({ status: "completed" });
    const all = await events(s);
    expect(all.filter((e) => e.type === "tool.call").map((e) => e.data)).toMatchObject([
      { name: "echo", arguments: { value: "from the container" } },
    ]);
    expect(all.find((e) => e.type === "tool.result")?.data).toMatchObject({
      content: [{ type: "text", text: "from the container" }],
      is_error: false,
    });
    await b.t.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
  });

  it("never gives claude-code inside the provider's key: it reaches Brain's proxy bridged in", async () => {
    const inside = { config: { options: { innerHarness: "claude-code", image: BASE_IMAGE } } };
    await checkKeyNotInAgent(await devcontainerBed(), ["x-api-key", FAKE_KEY], "/v1/messages", {
      options: inside,
    });
  });

  it("gives each session's dev container its own proxy, which refuses another session's token", async () => {
    const inside = { config: { options: { innerHarness: "claude-code", image: BASE_IMAGE } } };
    await checkTokensApart(await devcontainerBed(), "/v1/messages", { options: inside });
  });

  it("bridges only the proxy into the dev container, not the provider's own port", async () => {
    const inside = { config: { options: { innerHarness: "claude-code", image: BASE_IMAGE } } };
    await checkProviderOnlyThroughProxy(await devcontainerBed(), "/v1/messages", { options: inside });
  });
});

describe.runIf(locateCli("opencode"))("opencode in a dev container on the real engine", () => {
  it("runs opencode's server inside, published back to this host, against the fake provider", async () => {
    const b = await devcontainerBed({ path: "/v1", model: "fake-model" });
    const s = await session(b, "opencode");
    const turn = await s.prompt("NOTOOL say hello");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    expect(textOf(await events(s), turn.turn)).toBe("hello from fake");
    const [id] = sessionContainers(s.id);
    expect(docker("top", id!)).toContain("opencode");
    await b.t.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
  });
});

describe("a runner in a dev container on the real engine", () => {
  it("hands the inner command's provider key to the container with no host process holding it in its argv", async () => {
    const b = await devcontainerBed({ path: "/v1", model: "openai/fake-model" });
    const s = await session(b, "pi");
    expect(await (await s.prompt("say hello")).settled).toMatchObject({ status: "completed" });
    const native = b.t.store.paths(s.id).native;
    const key = `sk-argv-${process.pid}-${Date.now()}`;
    // The launcher the session's runner was started with (its shim runs on), in front of a command that says
    // whether the key arrived and then waits (for stdin) while every host process is looked at.
    const shim = commandLines().find(
      ({ argv }) => argv[1] === devcontainerShim() && argv.includes(join(native, "devcontainer")),
    );
    expect(shim).toBeDefined();
    const [program, ...args] = shim!.argv.slice(0, shim!.argv.indexOf("--") + 1);
    const check = 'case "$PROVIDER_KEY" in sk-argv-?*) echo arrived;; *) echo missing;; esac; read -r _';
    const child = spawn(program!, [...args, "/bin/sh", "-c", check], {
      cwd: join(native, "inner"),
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PROVIDER_KEY: key },
      stdio: ["pipe", "pipe", "inherit"],
    });
    const said = await new Promise<string>((resolve) => {
      child.stdout.once("data", (d) => resolve(String(d)));
      child.once("exit", (code) => resolve(`exited with ${code}`));
    });
    expect(said.trim()).toBe("arrived");
    const holding = commandLines().filter(({ argv }) => argv.some((word) => word.includes(key)));
    expect(holding.map(({ pid, argv }) => `${pid}: ${argv.join(" ")}`)).toEqual([]);
    child.stdin.end("\n");
    expect(await new Promise((resolve) => child.once("exit", resolve))).toBe(0);
    await b.t.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
  });

  it("runs the pi runner inside against the fake provider, and removes the container on close", async () => {
    const b = await devcontainerBed({ path: "/v1", model: "openai/fake-model" });
    const s = await session(b, "pi");
    const turn = await s.prompt("say hello");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    // The session binds no tools, so the fake provider answers as it does a request without tools.
    expect(textOf(await events(s), turn.turn)).toBe("Fake title");
    expect(b.sandbox.provider.requests.at(-1)?.body?.model).toBe("fake-model");
    const [id] = sessionContainers(s.id);
    expect(docker("top", id!)).toContain("runners/pi/dist/main.js");
    // Bounded like every session's container, with the defaults when the config's `containers` sets none.
    expect(docker("inspect", "-f", "{{.HostConfig.PidsLimit}} {{.HostConfig.Memory}}", id!)).toBe(
      `4096 ${4 * 2 ** 30}`,
    );
    // Recorded while it runs (by its full id), for the next Brain's start to remove should this one die.
    expect(readdirSync(b.records)).toEqual([expect.stringMatching(new RegExp(`^${id}[0-9a-f]*\\.json$`))]);
    await b.t.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
    expect(readdirSync(b.records)).toEqual([]);
  });
});

describe("a dev container image that asks for the host", () => {
  // Its devcontainer.metadata label (as features write it into prebuilt images) mounts this host's root and
  // Docker's socket: the Dev Container CLI would grant both, and the agent inside would own the host.
  const tag = `brain-test/devc-host-grants-${process.pid}`;
  const metadata = [
    {
      mounts: [
        "source=/,target=/hostroot,type=bind",
        "source=/var/run/docker.sock,target=/var/run/docker.sock,type=bind",
      ],
    },
  ];
  beforeAll(() => {
    const made = docker("create", BASE_IMAGE);
    try {
      docker(
        "commit",
        "-c",
        `LABEL devcontainer.metadata=${JSON.stringify(JSON.stringify(metadata))}`,
        made,
        tag,
      );
    } finally {
      docker("rm", "-f", made);
    }
  });
  afterAll(() => {
    docker("rmi", "-f", tag);
  });

  it("is refused before devcontainer up, naming what it asks for; no container is left", async () => {
    const b = await devcontainerBed({ path: "/v1", model: "openai/fake-model" });
    const s = await b.create({ config: { options: { innerHarness: "pi", image: tag } } });
    const outcome = await (await s.prompt("say hello")).settled;
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.message).toMatch(
      /image "brain-test\/devc-host-grants-\d+" asks in its devcontainer\.metadata label for mounts: .*source=\/,target=\/hostroot.*LABEL devcontainer\.metadata="\[\]"/,
    );
    expect(docker("ps", "-aq", "--filter", `ancestor=${tag}`)).toBe("");
  });
});

describe("a dev container image whose lifecycle command hangs", () => {
  const tag = `brain-test/devc-hanging-hook-${process.pid}`;
  beforeAll(() => imageWithMetadata(tag, [{ postCreateCommand: "sleep 1000" }]));
  afterAll(() => {
    docker("rmi", "-f", tag);
  });

  it("is stopped after lifecycleTimeout, naming the command and the setting; no container is left", async () => {
    const b = await devcontainerBed({ path: "/v1", model: "openai/fake-model" });
    const s = await b.create({
      config: { options: { innerHarness: "pi", image: tag, lifecycleTimeout: 3 } },
    });
    const outcome = await (await s.prompt("say hello")).settled;
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.message).toMatch(
      /the image's postCreateCommand "sleep 1000" \(from its devcontainer\.metadata label\) did not finish within 3 s and was stopped, its container removed; .*raise lifecycleTimeout \(an agent definition's harness\.lifecycleTimeout, in seconds; default 300\)/,
    );
    expect(sessionContainers(s.id)).toEqual([]);
    expect(docker("ps", "-aq", "--filter", `ancestor=${tag}`)).toBe("");
  });
});

describe("a dev container image whose lifecycle command fails", () => {
  const tag = `brain-test/devc-failing-hook-${process.pid}`;
  const hook = "echo installing; echo 'npm ERR! no registry' >&2; exit 3";
  beforeAll(() => imageWithMetadata(tag, [{ postCreateCommand: hook }]));
  afterAll(() => {
    docker("rmi", "-f", tag);
  });

  it("names the command, its exit code and its output, not only the Dev Container CLI's 'Command failed'", async () => {
    const b = await devcontainerBed({ path: "/v1", model: "openai/fake-model" });
    const s = await b.create({ config: { options: { innerHarness: "pi", image: tag } } });
    const outcome = await (await s.prompt("say hello")).settled;
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.message).toContain(
      `the image's postCreateCommand ${JSON.stringify(hook)} (from its devcontainer.metadata label) failed with exit code 3, its container removed; `,
    );
    expect(outcome.error?.message).toMatch(/; its output ended with: installing\nnpm ERR! no registry$/);
    expect(sessionContainers(s.id)).toEqual([]);
  });
});

describe("a dev container image whose label sets remoteUser", () => {
  const tag = `brain-test/devc-remote-user-${process.pid}`;
  beforeAll(() => imageWithMetadata(tag, [{ remoteUser: "node" }]));
  afterAll(() => {
    docker("rmi", "-f", tag);
  });

  it("runs the inner harness as that user, as devcontainer exec would", async () => {
    const b = await devcontainerBed({ path: "/v1", model: "openai/fake-model" });
    const s = await b.create({ config: { options: { innerHarness: "pi", image: tag } } });
    const turn = await s.prompt("say hello");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    const [id] = sessionContainers(s.id);
    const runner = docker("top", id!, "-o", "pid,uid,args")
      .split("\n")
      .filter((line) => line.includes("runners/pi/dist/main.js"));
    expect(runner.length).toBeGreaterThan(0);
    expect(runner.map((line) => line.trim().split(/\s+/)[1])).toEqual(runner.map(() => "1000"));
    await b.t.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
  });

  // A fork restores the transcript into a fresh native dir, and Brain (root here) moves it into the folder Claude
  // Code looks in for the new cwd: that folder and the transcript are the container user's, to go on writing.
  it.runIf(locateCli("claude"))("resumes a fork of claude-code with its transcript that user's", async () => {
    const b = await devcontainerBed();
    const s = await b.create({ config: { options: { innerHarness: "claude-code", image: tag } } });
    expect((await (await s.prompt("NOTOOL first")).settled).status).toBe("completed");
    await s.checkpoint();
    const fork = await b.t.brain.fork(s.id);
    const outcome = await (await fork.prompt("NOTOOL second")).settled;
    expect(outcome.error?.message).toBeUndefined();
    expect(outcome.status).toBe("completed");
    const projects = join(b.t.store.paths(fork.id).native, "inner", "claude", "projects");
    const entries = readdirSync(projects, { recursive: true }).map(String);
    expect(entries.some((e) => e.endsWith(".jsonl"))).toBe(true);
    for (const entry of entries) expect([entry, statSync(join(projects, entry)).uid]).toEqual([entry, 1000]);
    for (const id of [s.id, fork.id]) await b.t.brain.closeSession(id);
    expect([...sessionContainers(s.id), ...sessionContainers(fork.id)]).toEqual([]);
  });

  // Brain runs as root here and the agent as uid 1000: the endpoint's proxy, socket and config are its to use.
  const fake = { path: "/v1", model: "fake-model" };
  const families = [
    { inner: "claude-code", cli: "claude", echo: "mcp__brain__echo", provider: {} },
    { inner: "pi-cli", cli: "pi", echo: "echo", provider: fake },
    // These make their homes and write their configs once the container is up: they are that user's too.
    { inner: "codex", cli: "codex", echo: "mcp__brain.echo", provider: fake },
    { inner: "opencode", cli: "opencode", echo: "brain_echo", provider: fake },
    {
      inner: "acp:codex",
      cli: "codex-acp",
      echo: "mcp__brain.echo",
      provider: { ...fake, model: "gpt-5.4" },
    },
  ];
  for (const f of families) {
    it.runIf(locateCli(f.cli))(
      `runs ${f.inner} inside as that user in bound tool mode: Brain's echo through the endpoint`,
      async () => {
        const b = await devcontainerBed(f.provider);
        const s = await b.create({
          config: { tool_mode: "bound", tools: ["echo"], options: { innerHarness: f.inner, image: tag } },
        });
        const turn = await s.prompt(`Echo it CALL ${f.echo} {"value":"as node"}`);
        const outcome = await turn.settled;
        expect(outcome.error?.message).toBeUndefined();
        expect(outcome.status).toBe("completed");
        const all = await events(s);
        expect(all.find((e) => e.type === "tool.result")?.data).toMatchObject({
          content: [{ type: "text", text: "as node" }],
          is_error: false,
        });
        // The endpoint's socket is the container user's (uid 1000) alone: no other user may connect.
        const [id] = sessionContainers(s.id);
        const mounts = JSON.parse(docker("inspect", "-f", "{{json .Mounts}}", id!)) as { Source: string }[];
        const tools = mounts.find((m) => m.Source.startsWith(join(tmpdir(), "brain-sandbox-")))!.Source;
        const [endpointDir] = readdirSync(tools);
        const socket = statSync(join(tools, endpointDir!, "tools.sock"));
        expect([socket.uid, socket.mode & 0o777]).toEqual([1000, 0o600]);
        await b.t.brain.closeSession(s.id);
        expect(sessionContainers(s.id)).toEqual([]);
      },
    );
  }
});
