// What a session's container may take of this host, on a real engine: the operator's `containers` bounds (or the
// defaults) on the docker harness's and the docker sandbox's containers, kept when an agent definition's
// docker_args asks for more, and a fork bomb inside stopping at the pids bound instead of taking the host.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { HarnessOptions } from "../../core/harness.js";
import type { ContainerLimits } from "../../protocol/config.js";
import { makeBrain, standIn, type TestBrain, tempDir } from "../../testing/brain.js";
import {
  docker,
  ensureDockerEngine,
  imageWithCommand,
  sessionContainers,
} from "../../testing/docker-engine.js";
import { fixtures, root } from "../../testing/nui.js";
import { sandboxSettings } from "../cli/descriptor.js";
import { installMounts, SandboxableFactory } from "../sandbox/docker-sandbox.js";
import { DockerFactory } from "./docker.js";

let seedImage = "";
beforeAll(async () => {
  const base = await ensureDockerEngine();
  seedImage = imageWithCommand(base, "brain-test/limits-seed-echo", [
    "python3",
    join(fixtures, "seed_http_echo.py"),
  ]);
}, 600_000);

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

const MOUNT = installMounts(root).flatMap((dir) => ["-v", `${dir}:${dir}:ro`]);
const SMALL: ContainerLimits = { memory: "256m", pids: 64, cpus: 1 };

/** The container's bounds as Docker holds them. */
function boundsOf(id: string) {
  const host = JSON.parse(docker("inspect", "-f", "{{json .HostConfig}}", id));
  return { memory: host.Memory, swap: host.MemorySwap, pids: host.PidsLimit, nanoCpus: host.NanoCpus };
}

async function dockerSession(limits: ContainerLimits | undefined, dockerArgs: string[] = []) {
  const factory = new DockerFactory("docker", undefined, {}, undefined, limits);
  t = makeBrain({ factories: [factory] });
  const s = await t.brain.create({
    harness: "docker",
    config: {
      options: {
        image: seedImage,
        containerPort: 9090,
        network: "none",
        docker_args: [...MOUNT, ...dockerArgs],
        env: { PORT: "9090" },
      },
    },
  });
  expect(await (await s.prompt("hello")).settled).toMatchObject({ status: "completed" });
  const [id] = sessionContainers(s.id);
  return { s, id: id! };
}

describe("a session's container on a real engine", () => {
  it("carries the operator's bounds, which an agent definition's docker_args cannot lift; a fork bomb stops there", async () => {
    const lift = ["--pids-limit", "1000000", "--memory", "8g", "--memory-swap", "-1", "--cpus", "2"];
    const { s, id } = await dockerSession(SMALL, lift);
    expect(boundsOf(id)).toEqual({ memory: 256 << 20, swap: 256 << 20, pids: 64, nanoCpus: 1e9 });
    const bomb = "i=0; while [ $i -lt 500 ]; do sleep 600 & i=$((i+1)); done; echo spawned $i";
    const said = await new Promise<string>((resolve) => {
      execFile("docker", ["exec", id, "sh", "-c", bomb], (_err, stdout, stderr) => resolve(stdout + stderr));
    });
    expect(said).toMatch(/can't fork/);
    expect(said).not.toContain("spawned 500");
    // `docker top` prints a header line, then one line a process.
    expect(docker("top", id).split("\n").length - 1).toBeLessThanOrEqual(64);
    await t!.brain.closeSession(s.id);
    expect(sessionContainers(s.id)).toEqual([]);
  });

  it("has bounds when the operator set none", async () => {
    const { id } = await dockerSession(undefined);
    expect(boundsOf(id)).toMatchObject({ memory: 4 * 2 ** 30, swap: 4 * 2 ** 30, pids: 4096 });
    expect(boundsOf(id).nanoCpus).toBeGreaterThan(0);
  });

  it("carries them in the docker sandbox too", async () => {
    const home = tempDir("brain-limits-home-");
    const dir = tempDir("brain-limits-native-");
    const plain = standIn("claude-code", {});
    // The stand-in calls no provider: it needs no way to one from the container without network.
    const factory = new SandboxableFactory(plain, () => plain, {
      ...sandboxSettings("claude-code", home, SMALL),
      needsProvider: false,
    });
    const sessionId = `limits-${process.pid}-${Date.now()}`;
    const harness = await factory.open({
      sessionId,
      dir,
      config: { options: { sandbox: "docker" } },
      tools: [],
      provider: {},
      emit: () => {},
      call: async () => ({ content: [] }),
    } as unknown as HarnessOptions);
    try {
      const [id] = sessionContainers(sessionId);
      expect(boundsOf(id!)).toEqual({ memory: 256 << 20, swap: 256 << 20, pids: 64, nanoCpus: 1e9 });
    } finally {
      await harness.close();
    }
    expect(sessionContainers(sessionId)).toEqual([]);
  });
});
