// The `docker` harness on a real Docker engine (scripts/docker-engine.sh installs and starts it, and builds the
// base image from this host's node and python3). Every container runs with --network none: Brain reaches the
// agent through the container's network namespace, so no packet leaves a loopback.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, textOf, waitForEvent } from "../../testing/brain.js";
import {
  docker,
  ensureDockerEngine,
  imageWithCommand,
  sessionContainers,
} from "../../testing/docker-engine.js";
import { fixtures, root } from "../../testing/nui.js";
import { installMounts } from "../sandbox/docker-sandbox.js";
import { DockerFactory } from "./docker.js";

let base = "";
let seedImage = "";
let tsImage = "";
let volumeImage = "";
beforeAll(async () => {
  base = await ensureDockerEngine();
  seedImage = imageWithCommand(base, "brain-test/seed-echo", [
    "python3",
    join(fixtures, "seed_http_echo.py"),
  ]);
  tsImage = imageWithCommand(base, "brain-test/ts-agent", [
    "node",
    join(root, "dist/src/testing/fixtures/nui/ts-agent.js"),
    "http",
    "8090",
  ]);
  // The agent's image declares a volume (as images of databases and build tools do): each container gets one.
  const made = docker("create", tsImage);
  try {
    volumeImage = docker("commit", "-c", "VOLUME /agent-data", made, "brain-test/ts-agent-volume");
  } finally {
    docker("rm", "-f", made);
  }
}, 600_000);

/** The anonymous volumes a container has (its image's VOLUMEs). */
const volumesOf = (id: string) =>
  docker("inspect", "-f", '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}', id)
    .split(" ")
    .filter(Boolean);
const volumeExists = (name: string) => docker("volume", "ls", "-q", "--filter", `name=^${name}$`) !== "";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** The project read-only at its own path (and its node_modules, when a link), so the images' commands run. */
const MOUNT = installMounts(root).flatMap((dir) => ["-v", `${dir}:${dir}:ro`]);

function session(image: string, containerPort: number, env: Record<string, string> = {}) {
  t = makeBrain({ factories: [new DockerFactory("docker", undefined, { interruptGraceMs: 3_000 })] });
  return t.brain.create({
    harness: "docker",
    config: { options: { image, containerPort, network: "none", docker_args: MOUNT, env } },
  });
}

/** The TCP ports this process listens on (its sockets' inodes, looked up in its namespace's table). */
function ownTcpListeners(): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    const link = (() => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    })();
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
    if (inode) inodes.add(inode);
  }
  return readFileSync("/proc/self/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[3] === "0A" && inodes.has(f[9] ?? ""))
    .map((f) => Number.parseInt(f[1]!.split(":")[1]!, 16));
}

describe("docker on a real engine", () => {
  it("a network none agent answers on no port of this host: Brain reaches it through its socket file", async () => {
    const before = new Set(ownTcpListeners());
    const s = await session(seedImage, 9090, { PORT: "9090" });
    const turn = await s.prompt("through the socket");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    // The seed's agent checks no token: any local user who found such a port could run it.
    for (const port of ownTcpListeners().filter((p) => !before.has(p))) {
      const answer = await fetch(`http://127.0.0.1:${port}/info`, { signal: AbortSignal.timeout(5_000) })
        .then((r) => r.text())
        .catch(() => "");
      expect(answer, `port ${port}`).not.toContain('"name"');
    }
  });

  it("the seed's Python agent: turns stream through, the session's label is on its container, close removes it", async () => {
    const s = await session(seedImage, 9090, { PORT: "9090" });
    for (const text of ["hello", "from a container"]) {
      const turn = await s.prompt(text);
      expect(await turn.settled).toMatchObject({ status: "completed" });
      expect(textOf(await events(s), turn.turn)).toBe(text);
    }
    const [id] = sessionContainers(s.id);
    expect(docker("inspect", "-f", "{{.HostConfig.NetworkMode}} {{.State.Running}}", id!)).toBe("none true");
    await t!.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
  });

  it("the TypeScript agent: cancel mid-run settles interrupted and the next turn runs in the same container", async () => {
    const s = await session(tsImage, 8090);
    const turn = await s.prompt("slow");
    await waitForEvent(s, (e) => e.type === "assistant.delta" && e.turn === turn.turn);
    await s.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    const next = await s.prompt("after");
    expect((await next.settled).status).toBe("completed");
    expect(textOf(await events(s), next.turn)).toMatch(/^ts says: after/);
    expect(sessionContainers(s.id)).toHaveLength(1);
    await t!.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
  });

  it("the container's NUI_API_URL token and agent token never reach the session's log, even when the agent says them", async () => {
    const s = await session(tsImage, 8090);
    for (const name of ["NUI_API_URL", "BRAIN_AGENT_TOKEN"]) {
      expect(await (await s.prompt(`say-env ${name}`)).settled).toMatchObject({ status: "completed" });
    }
    const [id] = sessionContainers(s.id);
    const env = JSON.parse(docker("inspect", "-f", "{{json .Config.Env}}", id!)) as string[];
    const given = (name: string) => env.find((e) => e.startsWith(`${name}=`))!.slice(name.length + 1);
    const url = new URL(given("NUI_API_URL"));
    const secret = url.pathname.split("/")[1]!;
    expect(secret.length).toBeGreaterThanOrEqual(16);
    const logged = JSON.stringify(await events(s));
    expect(logged).toContain(`NUI_API_URL=${url.origin}/[redacted:NUI_API_URL token]`);
    expect(logged).toContain("BRAIN_AGENT_TOKEN=[redacted:BRAIN_AGENT_TOKEN]");
    expect(logged).not.toContain(secret);
    expect(logged).not.toContain(given("BRAIN_AGENT_TOKEN"));
    await t!.brain.closeSession(s.id);
  });

  it("an agent that exits mid-run fails the turn with brain_error and its log's tail", async () => {
    const s = await session(tsImage, 8090);
    const outcome = await (await s.prompt("crash")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(outcome.error?.message).toMatch(
      /exited with code 5; its log ends:\n.*ts agent: crashing on purpose/s,
    );
  });

  it("a container killed mid-run fails the turn; the next turn sweeps the session's leftovers and starts afresh", async () => {
    const s = await session(tsImage, 8090);
    const turn = await s.prompt("slow");
    await waitForEvent(s, (e) => e.type === "assistant.delta" && e.turn === turn.turn);
    const [first] = sessionContainers(s.id);
    // A leftover of an earlier host that crashed with this session open, labelled as the harness labels.
    const stale = docker(
      "run",
      "-d",
      "--network",
      "none",
      "--label",
      `brain.session=${s.id}`,
      base,
      "sleep",
      "600",
    );
    docker("kill", first!);
    const outcome = await turn.settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(outcome.error?.message).toMatch(/container [0-9a-f]{12} exited with code 137/);
    const next = await s.prompt("again");
    expect((await next.settled).status).toBe("completed");
    const now = sessionContainers(s.id);
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(first!.slice(0, 12));
    expect(now).not.toContain(stale.slice(0, 12));
    await t!.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
  });

  it("removes the anonymous volumes of the session's containers with them: a leftover's at the sweep, its own on close", async () => {
    const id = `volumes-${process.pid}-${Date.now()}`;
    // A leftover of an earlier host that crashed with this session open, with a volume of its own.
    const stale = docker("run", "-d", "--network", "none", "--label", `brain.session=${id}`, volumeImage);
    const volumes = volumesOf(stale);
    t = makeBrain({ factories: [new DockerFactory()] });
    const s = await t.brain.create({
      id,
      harness: "docker",
      config: { options: { image: volumeImage, containerPort: 8090, network: "none", docker_args: MOUNT } },
    });
    expect((await (await s.prompt("hello")).settled).status).toBe("completed");
    const [own] = sessionContainers(s.id);
    expect(own).not.toBe(stale.slice(0, 12));
    volumes.push(...volumesOf(own!));
    expect(volumes).toHaveLength(2);
    await t.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
    expect(volumes.filter(volumeExists)).toEqual([]);
  });
});
