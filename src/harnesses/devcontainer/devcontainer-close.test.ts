// A dev container session closed while its container starts: `devcontainer up` (which may pull or build the image
// and runs the image's lifecycle commands, for up to minutes) is stopped and what it started removed, rather than
// the close waiting for it. Real Dev Container CLI, real Docker.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { type CliBed, cliBed } from "../../testing/cli.js";
import {
  devcontainerCliOffline,
  docker,
  ensureDockerEngine,
  imageWithMetadata,
  sessionContainers,
} from "../../testing/docker-engine.js";
import { catalogFactories } from "../../testing/nui.js";
import { until } from "../../testing/processes.js";
import { type StalledRegistry, stalledRegistry } from "../../testing/stalled-registry.js";
import { BASE_IMAGE } from "../sandbox/docker-sandbox.js";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 600_000 });

const tag = `brain-test/devc-closed-while-up-${process.pid}`;
beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
  // Run in the workspace folder (the session's inner dir): each step leaves a file the test sees.
  imageWithMetadata(tag, [{ postCreateCommand: "touch hook-started && sleep 30 && touch hook-ended" }]);
});
afterAll(() => {
  docker("rmi", "-f", tag);
});
beforeEach(devcontainerCliOffline);
let bed: CliBed | undefined;
let registry: StalledRegistry | undefined;
afterEach(async () => {
  await bed?.close();
  bed = undefined;
  await registry?.close();
  if (registry) docker("rmi", "-f", registry.image);
  registry = undefined;
});

describe("a dev container session closed while devcontainer up runs", () => {
  it("stops up and removes its container, not waiting for the image's lifecycle command", async () => {
    const { factories } = catalogFactories({ brainHome: tempDir("brain-devc-close-") });
    const factory = factories.find((f) => f.name === "devcontainer")!;
    bed = await cliBed(() => factory, { path: "/v1", model: "openai/fake-model" });
    const session = await bed.create({ config: { options: { innerHarness: "pi", image: tag } } });
    const turn = await session.prompt("say hello");
    const inner = join(bed.t.store.paths(session.id).native, "inner");
    await until(() => existsSync(join(inner, "hook-started")));
    await bed.t.brain.closeSession(session.id);
    // The close did not wait for the command to end.
    expect(existsSync(join(inner, "hook-ended"))).toBe(false);
    const outcome = await turn.settled;
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.message).toMatch(
      /devcontainer up --workspace-folder \S+ was stopped, its container removed: the session was closed while its dev container started/,
    );
    expect(sessionContainers(session.id)).toEqual([]);
    expect(docker("ps", "-aq", "--filter", `ancestor=${tag}`)).toBe("");
  });

  it("stops the pull of an image this host lacks (before up); the turn fails saying it was closed while pulling it", async () => {
    // A real pull, from a registry on this host's loopback that holds the image's layer for 30 s.
    registry = await stalledRegistry(`brain-test/devc-held-${process.pid}`, 30_000);
    const { factories } = catalogFactories({ brainHome: tempDir("brain-devc-close-") });
    const factory = factories.find((f) => f.name === "devcontainer")!;
    bed = await cliBed(() => factory, { path: "/v1", model: "openai/fake-model" });
    const session = await bed.create({ config: { options: { innerHarness: "pi", image: registry.image } } });
    const turn = await session.prompt("say hello");
    await registry.layerAsked;
    await bed.t.brain.closeSession(session.id);
    // The close did not wait for the pull to end.
    expect(registry.layerSent(), "the close waited for the pull to end").toBe(false);
    const outcome = await turn.settled;
    expect(outcome.error?.message).toBe(
      `harness "devcontainer": the session was closed while pulling ${registry.image}; the pull was stopped`,
    );
    expect(sessionContainers(session.id)).toEqual([]);
  });
});
