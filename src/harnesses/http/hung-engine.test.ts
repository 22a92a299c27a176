// A session closed while the Docker engine does not answer (hung, not stopped: it takes the connection and says
// nothing). Brain's docker commands go through a relay to the real engine's socket that the test makes hang: the
// close must end within its docker commands' bounds, not wait on the engine, and the session's log must say why
// its container is still there. Real Docker engine, real agent container.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readEventsFile } from "../../store/fs/log-read.js";
import { makeBrain, type TestBrain, tempDir } from "../../testing/brain.js";
import {
  docker,
  ensureDockerEngine,
  imageWithCommand,
  sessionContainers,
} from "../../testing/docker-engine.js";
import { type EngineRelay, engineRelay } from "../../testing/engine-relay.js";
import { fixtures, root } from "../../testing/nui.js";
import { installMounts } from "../sandbox/docker-sandbox.js";
import { ContainerRecords, containerRecordsDir } from "./container-records.js";
import { DockerFactory } from "./docker.js";
import { DockerCli } from "./docker-cli.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

// Each connection to the engine while it answers; once hung, every new one is taken and left unanswered.
let relay: EngineRelay;
let image = "";
beforeAll(async () => {
  const base = await ensureDockerEngine();
  image = imageWithCommand(base, "brain-test/seed-echo", ["python3", join(fixtures, "seed_http_echo.py")]);
  relay = await engineRelay();
}, 600_000);

let t: TestBrain | undefined;
afterAll(async () => {
  relay.hang(undefined);
  await t?.cleanup();
  await relay.close();
});

describe("a docker session closed while the Docker engine does not answer", () => {
  it("ends the close within its commands' bounds; its log says the container could not be removed and why", async () => {
    const cli = new DockerCli("docker", relay.env);
    const home = tempDir("brain-hung-engine-home-");
    const factory = new DockerFactory("docker", cli, { stopMs: 2_000 }, new ContainerRecords(home));
    t = makeBrain({ factories: [factory] });
    const mount = installMounts(root).flatMap((d) => ["-v", `${d}:${d}:ro`]);
    const session = await t.brain.create({
      harness: "docker",
      config: {
        options: { image, containerPort: 9090, network: "none", docker_args: mount, env: { PORT: "9090" } },
      },
    });
    expect((await (await session.prompt("hello")).settled).status).toBe("completed");
    const [id] = sessionContainers(session.id);
    try {
      relay.hang("all");
      await t.brain.closeSession(session.id);
      const warnings = (await readEventsFile(t.store.paths(session.id).events)).filter(
        (e) => e.type === "harness.warning",
      );
      expect(warnings.map((e) => (e.data as { message: string }).message)).toEqual([
        `container ${id} (${image}) could not be removed: docker rm timed out after 2s; it stays recorded, and Brain's next start removes it`,
      ]);
      // Still there, and recorded for the next start.
      expect(readdirSync(containerRecordsDir(home)).filter((name) => name.startsWith(id!))).toHaveLength(1);
    } finally {
      docker("rm", "-f", "-v", id!);
    }
  });
});
