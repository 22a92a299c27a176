// Containers a Brain that died left running, on a real Docker engine: recorded while they run, and removed by the
// next Brain's start on the same home; the containers of a Brain that still runs are left alone.

/** A Brain in a process of its own on `home`: one `docker` session, a turn, then it says the session's id. */
const brainWithContainer = (root: string, home: string, config: string, image: string) => `
  const { createBrain } = await import(${JSON.stringify(join(root, "dist/src/cli/setup.js"))});
  const { loadConfig } = await import(${JSON.stringify(join(root, "dist/src/cli/config.js"))});
  const brain = createBrain(loadConfig(${JSON.stringify(join(config, "brain.config.json"))}, ${JSON.stringify(config)}), ${JSON.stringify(home)});
  const options = { image: ${JSON.stringify(image)}, containerPort: 8090, network: "none", docker_args: ${JSON.stringify(mountArgs(root))} };
  const session = await brain.create({ harness: "docker", config: { options } });
  const settled = await (await session.prompt("hi")).settled;
  process.stdout.write(settled.status === "completed" ? "open " + session.id + "\\n" : JSON.stringify(settled) + "\\n");
  await new Promise(() => {});
`;

import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { loadConfig } from "../../cli/config.js";
import { createBrain } from "../../cli/setup.js";
import { installRoot } from "../../core/install-root.js";
import { tempDir } from "../../testing/brain.js";
import {
  docker,
  ensureDockerEngine,
  imageWithCommand,
  sessionContainers,
} from "../../testing/docker-engine.js";
import { BASE_IMAGE, installMounts } from "../sandbox/docker-sandbox.js";
import { Container } from "./container.js";
import { ContainerRecords, containerRecordsDir, removeOrphanedContainers } from "./container-records.js";
import { DockerCli } from "./docker-cli.js";

/** The project read-only at its own path (and its node_modules, when a link): the agent's script runs. */
function mountArgs(root: string): string[] {
  return installMounts(root).flatMap((dir) => ["-v", `${dir}:${dir}:ro`]);
}

vi.setConfig({ testTimeout: 120_000, hookTimeout: 600_000 });

const label = `brain.test=orphans-${process.pid}`;
const agentImage = `brain-test/orphan-agent-${process.pid}`;
beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
  const root = installRoot();
  imageWithCommand(BASE_IMAGE, agentImage, [
    "node",
    join(root, "dist/src/testing/fixtures/nui/ts-agent.js"),
    "http",
    "8090",
  ]);
});
afterAll(() => {
  docker("rmi", "-f", agentImage);
  const left = docker("ps", "-aq", "--filter", `label=${label}`).split("\n").filter(Boolean);
  if (left.length) docker("rm", "-f", ...left);
});

const running = (id: string) => docker("ps", "-q", "--no-trunc", "--filter", `id=${id}`) === id;

it("a Brain's start removes the containers a Brain that died on this home left running, and only those", async () => {
  const home = tempDir("brain-orphans-");
  const dir = containerRecordsDir(home);
  const start = () => docker("run", "-d", "--network", "none", "--label", label, BASE_IMAGE, "sleep", "600");
  const orphan = start();
  const live = start();
  // Recorded by a Brain that has exited since (a process of its own), and by this one, which runs on.
  const records = join(installRoot(), "dist/src/harnesses/http/container-records.js");
  execFileSync(process.execPath, [
    "--input-type=module",
    "-e",
    `const { ContainerRecords } = await import(${JSON.stringify(records)});
     new ContainerRecords(${JSON.stringify(home)}).add("docker", ${JSON.stringify(orphan)});`,
  ]);
  new ContainerRecords(home).add("docker", live);
  expect(readdirSync(dir).sort()).toEqual([`${live}.json`, `${orphan}.json`].sort());

  const config = tempDir("brain-orphans-config-");
  writeFileSync(join(config, "brain.config.json"), "{}\n");
  const brain = createBrain(loadConfig(join(config, "brain.config.json"), config), home);
  try {
    // The removal runs beside the start; it is done when the record goes.
    await vi.waitFor(() => expect(existsSync(join(dir, `${orphan}.json`))).toBe(false), {
      timeout: 60_000,
      interval: 100,
    });
    expect(running(orphan)).toBe(false);
    expect(docker("ps", "-aq", "--no-trunc", "--filter", `id=${orphan}`)).toBe("");
    expect(running(live)).toBe(true);
    expect(existsSync(join(dir, `${live}.json`))).toBe(true);
  } finally {
    await brain.close();
    rmSync(config, { recursive: true, force: true });
  }
});

it("a Brain killed with -9 while a session's container runs: the next Brain's start on the home removes it", async () => {
  const root = installRoot();
  const home = tempDir("brain-crashed-");
  const config = tempDir("brain-crashed-config-");
  writeFileSync(join(config, "brain.config.json"), "{}\n");
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", brainWithContainer(root, home, config, agentImage)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const said = await new Promise<string>((resolve) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += String(d);
      if (out.includes("\n")) resolve(out.trim());
    });
    child.once("exit", (code) => resolve(`exited with ${code}: ${out}`));
  });
  expect(said).toMatch(/^open \S+$/);
  const id = said.slice("open ".length);
  expect(sessionContainers(id)).toHaveLength(1);
  child.kill("SIGKILL");
  await new Promise((resolve) => child.once("exit", resolve));

  // The session is never reopened: only the start of the next Brain on this home can remove what it left.
  const brain = createBrain(loadConfig(join(config, "brain.config.json"), config), home);
  try {
    await vi.waitFor(() => expect(sessionContainers(id)).toEqual([]), { timeout: 60_000, interval: 200 });
  } finally {
    await brain.close();
    const left = sessionContainers(id);
    if (left.length) docker("rm", "-f", ...left);
    rmSync(config, { recursive: true, force: true });
  }
});

it("two Brains on one engine, each with a session of the same id: opening one leaves the other's container be", async () => {
  const root = installRoot();
  const config = tempDir("brain-same-id-config-");
  writeFileSync(join(config, "brain.config.json"), "{}\n");
  const loaded = loadConfig(join(config, "brain.config.json"), config);
  const [first, second] = [
    createBrain(loaded, tempDir("brain-a-")),
    createBrain(loaded, tempDir("brain-b-")),
  ];
  const id = `same-id-${process.pid}`;
  const options = {
    image: agentImage,
    containerPort: 8090,
    network: "none",
    docker_args: mountArgs(root),
  };
  try {
    const a = await first.create({ id, harness: "docker", config: { options } });
    expect((await (await a.prompt("one")).settled).status).toBe("completed");
    const [mine] = sessionContainers(id);
    // A caller of the other Brain chose the same id.
    const b = await second.create({ id, harness: "docker", config: { options } });
    expect((await (await b.prompt("one")).settled).status).toBe("completed");
    expect(sessionContainers(id)).toContain(mine);
    expect(await (await a.prompt("two")).settled).toMatchObject({ status: "completed" });
  } finally {
    await first.close();
    await second.close();
    const left = sessionContainers(id);
    if (left.length) docker("rm", "-f", ...left);
    rmSync(config, { recursive: true, force: true });
  }
});

it("a Brain killed with -9 during a container's docker run: the next Brain's start removes what the run started", async () => {
  const home = tempDir("brain-killed-in-run-");
  const config = tempDir("brain-killed-in-run-config-");
  // A loaded engine: `run` has started the container, but has not returned its id when Brain is killed.
  const slowDocker = join(config, "docker");
  writeFileSync(
    slowDocker,
    '#!/bin/sh\nif [ "$1" = run ]; then docker "$@" >/dev/null; exec sleep 600; fi\nexec docker "$@"\n',
    { mode: 0o755 },
  );
  writeFileSync(join(config, "brain.config.json"), JSON.stringify({ nui: { docker: slowDocker } }));
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", brainWithContainer(installRoot(), home, config, agentImage)],
    { stdio: "ignore", detached: true },
  );
  const homes = () => docker("ps", "-aq", "--filter", `label=brain.home=${home}`).split("\n").filter(Boolean);
  try {
    await vi.waitFor(() => expect(homes()).toHaveLength(1), { timeout: 60_000, interval: 200 });
    process.kill(-(child.pid as number), "SIGKILL"); // Brain, and the docker run it waits on
    await new Promise((resolve) => child.once("exit", resolve));
    expect(readdirSync(containerRecordsDir(home))).toEqual([
      expect.stringMatching(/^run-[0-9a-f-]{36}\.json$/),
    ]);

    const brain = createBrain(loadConfig(join(config, "brain.config.json"), config), home);
    try {
      // The record goes once its container has.
      await vi.waitFor(() => expect(readdirSync(containerRecordsDir(home))).toEqual([]), {
        timeout: 60_000,
        interval: 200,
      });
      expect(homes()).toEqual([]);
    } finally {
      await brain.close();
    }
  } finally {
    const left = homes();
    if (left.length) docker("rm", "-f", ...left);
    rmSync(config, { recursive: true, force: true });
  }
});

it("a container an engine that stopped answering could not remove keeps its record until one that answers does", async () => {
  const home = tempDir("brain-engine-down-");
  const dir = containerRecordsDir(home);
  const config = tempDir("brain-engine-down-config-");
  // The docker CLI of an engine that has stopped: every command fails as Docker then says.
  const down = join(config, "docker");
  writeFileSync(down, '#!/bin/sh\nDOCKER_HOST=unix:///nonexistent/docker.sock exec docker "$@"\n', {
    mode: 0o755,
  });
  const id = docker("run", "-d", "--network", "none", "--label", label, BASE_IMAGE, "sleep", "600");
  const recordAsDead = (program: string) => {
    const records = join(installRoot(), "dist/src/harnesses/http/container-records.js");
    execFileSync(process.execPath, [
      "--input-type=module",
      "-e",
      `const { ContainerRecords } = await import(${JSON.stringify(records)});
       new ContainerRecords(${JSON.stringify(home)}).add(${JSON.stringify(program)}, ${JSON.stringify(id)});`,
    ]);
  };
  try {
    // A session closed while the engine did not answer.
    await new Container(new DockerCli(down), id, BASE_IMAGE, 10_000, new ContainerRecords(home)).remove();
    expect(readdirSync(dir)).toEqual([`${id}.json`]);
    // The next Brain's start, this one gone, with the engine still down: kept again.
    recordAsDead(down);
    await removeOrphanedContainers(dir).done;
    expect(readdirSync(dir)).toEqual([`${id}.json`]);
    expect(running(id)).toBe(true);
    // And once it answers, removed with its record.
    recordAsDead("docker");
    await removeOrphanedContainers(dir).done;
    expect(readdirSync(dir)).toEqual([]);
    expect(docker("ps", "-aq", "--no-trunc", "--filter", `id=${id}`)).toBe("");
  } finally {
    docker("rm", "-f", id);
    rmSync(config, { recursive: true, force: true });
  }
});
