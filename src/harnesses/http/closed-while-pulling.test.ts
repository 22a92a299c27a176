// A session closed while the `docker run` of its container pulls the image (the `docker` harness's agent image, a
// `sandbox: docker` session's sandbox_image): the pull is stopped, not waited for, the close returns, and the
// session's log says it was closed while pulling that image. Real Docker engine, real pull: from a registry on
// this host's loopback that holds the image's layer until the test lets it go (stalled-registry.ts).
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { HarnessFactory } from "../../core/harness.js";
import { makeBrain, standIn, type TestBrain, tempDir } from "../../testing/brain.js";
import { failedByClose } from "../../testing/closed-turn.js";
import { docker, ensureDockerEngine } from "../../testing/docker-engine.js";
import { type StalledRegistry, stalledRegistry } from "../../testing/stalled-registry.js";
import { BASE_IMAGE, SandboxableFactory } from "../sandbox/docker-sandbox.js";
import { DockerFactory } from "./docker.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

/** Longer than a close that stops the pull takes, by far: a pull nobody stopped ends then, and the test fails. */
const HOLD_MS = 30_000;

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
});

let t: TestBrain | undefined;
let registry: StalledRegistry | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  await registry?.close();
  if (registry) docker("rmi", "-f", registry.image);
  registry = undefined;
});

/** Starts a turn of a session on `factory` whose container's image is held; closes it once the pull is under way. */
async function closeWhilePulling(
  factory: HarnessFactory,
  options: (image: string) => Record<string, unknown>,
) {
  registry = await stalledRegistry(`brain-test/held-${process.pid}`, HOLD_MS);
  t = makeBrain({ factories: [factory] });
  const session = await t.brain.create({
    harness: factory.name,
    config: { options: options(registry.image) },
  });
  const turn = await session.prompt("hello");
  await registry.layerAsked;
  await t.brain.closeSession(session.id);
  // The close did not wait for the pull to end.
  expect(registry.layerSent(), "the close waited for the pull to end").toBe(false);
  const message = await failedByClose(t.store.paths(session.id).events, session.id, turn.settled);
  return { message: message ?? "", image: registry.image };
}

describe("a session closed while the docker run of its container pulls the image", () => {
  it("docker harness: stops the pull, and its log says it was closed while pulling the image", async () => {
    const { message, image } = await closeWhilePulling(new DockerFactory("docker"), (image) => ({
      image,
      containerPort: 8090,
      network: "none",
    }));
    expect(message).toBe(
      `harness "docker": the session was closed while pulling ${image}; docker run was stopped and the session's container removed`,
    );
  });

  it("sandbox: docker: stops the pull, and its log says it was closed while pulling the sandbox image", async () => {
    const install = tempDir("brain-pull-close-");
    const plain = standIn("claude-code", {});
    const factory = new SandboxableFactory(plain, () => plain, {
      shim: { node: "node", script: "shim.js" },
      installDir: install,
      needsProvider: false,
    });
    const { message, image } = await closeWhilePulling(factory, (image) => ({
      sandbox: "docker",
      sandbox_image: image,
    }));
    expect(message).toBe(
      `harness "claude-code": the session was closed while pulling ${image}; docker run was stopped and the session's container removed`,
    );
  });
});
