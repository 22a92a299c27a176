// A session closed during a short step of its open (the sweep of its earlier containers, its container's port),
// while the Docker engine holds that step's request unanswered: the step is stopped at once, not run to its own
// time limit (10-30 s), the close returns, no container of the session and no docker command is left, and the
// turn's error (in the session's log) names the step. Real Docker engine, through a relay to its socket that holds
// the step's request (engine-relay.ts); every other request goes through.
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { HarnessFactory } from "../../core/harness.js";
import { readEventsFile } from "../../store/fs/log-read.js";
import { makeBrain, standIn, type TestBrain, tempDir } from "../../testing/brain.js";
import { failedByClose } from "../../testing/closed-turn.js";
import { ensureDockerEngine, imageWithCommand, sessionContainers } from "../../testing/docker-engine.js";
import { type EngineRelay, engineRelay } from "../../testing/engine-relay.js";
import { fixtures, root } from "../../testing/nui.js";
import { installMounts, SandboxableFactory } from "../sandbox/docker-sandbox.js";
import { DockerFactory } from "./docker.js";
import { DockerCli } from "./docker-cli.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

let relay: EngineRelay;
let image = "";
beforeAll(async () => {
  const base = await ensureDockerEngine();
  image = imageWithCommand(base, "brain-test/seed-echo", ["python3", join(fixtures, "seed_http_echo.py")]);
  relay = await engineRelay();
}, 600_000);
afterAll(() => relay.close());

let t: TestBrain | undefined;
afterEach(async () => {
  relay.hang(undefined);
  await t?.cleanup();
  t = undefined;
});

/** Opens a session on `factory` with its first turn, holds the request `step` sends, and closes the session. */
async function closeDuring(factory: HarnessFactory, options: Record<string, unknown>, step: RegExp) {
  t = makeBrain({ factories: [factory] });
  const session = await t.brain.create({ harness: factory.name, config: { options } });
  relay.hang(step);
  const turn = await session.prompt("hello");
  expect(await relay.held()).toMatch(step);
  relay.hang(undefined);
  await t.brain.closeSession(session.id);
  // The held step's docker command is gone: stopped, not left waiting on the engine.
  expect(relay.heldClosed(), "a docker command the close stopped still runs").toBe(true);
  return failedByClose(t.store.paths(session.id).events, session.id, turn.settled);
}

describe("a session closed during a short step of its open, the engine holding that step", () => {
  it("docker harness, at docker port after docker run: the step is stopped and the container removed", async () => {
    const cli = new DockerCli("docker", relay.env);
    const message = await closeDuring(
      new DockerFactory("docker", cli),
      { image, containerPort: 9090, env: { PORT: "9090" } },
      /^GET \/v[\d.]+\/containers\/[0-9a-f]{64}\/json/,
    );
    expect(message).toBe(
      `harness "docker": the session was closed while it opened, asking Docker for its container's port (docker port); that step was stopped; the session's container was removed`,
    );
  });

  it("sandbox: docker, at the sweep of the session's earlier containers: the step is stopped", async () => {
    const plain = standIn("claude-code", {});
    const factory = new SandboxableFactory(plain, () => plain, {
      shim: { node: "node", script: "shim.js" },
      installDir: tempDir("brain-open-close-"),
      needsProvider: false,
      docker: new DockerCli("docker", relay.env),
    });
    const message = await closeDuring(factory, { sandbox: "docker" }, /^GET \/v[\d.]+\/containers\/json/);
    expect(message).toBe(
      `harness "claude-code": the session was closed while it opened, looking for containers an earlier run of the session left (docker ps); that step was stopped`,
    );
  });
});

describe("an interrupt of the first turn while its container starts", () => {
  it("waits for the start, and the log says at once that it takes effect once the container is up", async () => {
    t = makeBrain({ factories: [new DockerFactory("docker", new DockerCli("docker", relay.env))] });
    const mount = installMounts(root).flatMap((d) => ["-v", `${d}:${d}:ro`]);
    const options = {
      image,
      containerPort: 9090,
      network: "none",
      docker_args: mount,
      env: { PORT: "9090" },
    };
    const session = await t.brain.create({ harness: "docker", config: { options } });
    // The start is held at its sweep of earlier containers, which it waits for before it is up.
    relay.hang(/^GET \/v[\d.]+\/containers\/json/);
    const turn = await session.prompt("hello");
    await relay.held();
    relay.hang(undefined);
    await session.interrupt();
    const told = (await readEventsFile(t.store.paths(session.id).events)).filter(
      (e) => e.type === "user.interrupt" || e.type === "harness.warning",
    );
    expect(told.map((e) => [e.type, e.turn, e.data])).toEqual([
      ["user.interrupt", turn.turn, {}],
      [
        "harness.warning",
        turn.turn,
        {
          message:
            "the session's harness is still starting (its container or program): the interrupt takes effect once it is up, and the turn then ends without its prompt",
        },
      ],
    ]);
    relay.release();
    expect((await turn.settled).status).toBe("interrupted");
    // The container it waited for serves the next turn.
    expect((await (await session.prompt("again")).settled).status).toBe("completed");
    expect(sessionContainers(session.id)).toHaveLength(1);
  });
});
