// A dev container session closed during a short step of its open before `devcontainer up` (the check that the
// engine answers, the look at its image, the sweep of its earlier containers), while the Docker engine holds that
// step's request unanswered: the step is stopped at once, not run to its own time limit (20-30 s), the close
// returns, no docker command is left, and the turn's error (in the session's log) names the step. Real Docker
// engine, through a relay to its socket that holds the step's request (engine-relay.ts).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { HarnessFactory } from "../../core/harness.js";
import { readEventsFile } from "../../store/fs/log-read.js";
import { makeBrain, quietHarness, type TestBrain } from "../../testing/brain.js";
import {
  devcontainerCliOffline,
  ensureDockerEngine,
  sessionContainers,
} from "../../testing/docker-engine.js";
import { type EngineRelay, engineRelay } from "../../testing/engine-relay.js";
import { devcontainerShim, installDir } from "../nui/install-paths.js";
import { BASE_IMAGE } from "../sandbox/docker-sandbox.js";
import { DevcontainerFactory } from "./factory.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

let relay: EngineRelay;
beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
  relay = await engineRelay();
}, 600_000);
afterAll(() => relay.close());
beforeEach(devcontainerCliOffline);

let t: TestBrain | undefined;
afterEach(async () => {
  relay.hang(undefined);
  await t?.cleanup();
  t = undefined;
});

const probe = (): HarnessFactory => ({
  name: "probe",
  supportsSteering: false,
  open: async () => quietHarness(),
});

describe("a dev container session closed during a short step of its open, the engine holding that step", () => {
  it.each([
    ["checking that the Docker engine answers (docker info)", /^GET \/v[\d.]+\/info/],
    ["looking at its image (docker image inspect)", /^GET \/v[\d.]+\/images\/[^ ]+\/json/],
    [
      "looking for containers an earlier run of the session left (docker ps)",
      /^GET \/v[\d.]+\/containers\/json/,
    ],
  ])("stops the step %s; the turn's error names it", async (step, request) => {
    const factory = new DevcontainerFactory({
      inner: probe,
      innerNames: () => ["probe"],
      needsProvider: () => false,
      shim: { node: process.execPath, script: devcontainerShim() },
      installDir: installDir(),
      env: relay.env,
    });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({
      harness: "devcontainer",
      config: { options: { innerHarness: "probe", image: BASE_IMAGE } },
    });
    relay.hang(request);
    const turn = await session.prompt("hello");
    expect(await relay.held()).toMatch(request);
    relay.hang(undefined);
    await t.brain.closeSession(session.id);
    expect(relay.heldClosed(), "a docker command the close stopped still runs").toBe(true);
    const outcome = await turn.settled;
    expect(outcome.error?.message).toBe(
      `harness "devcontainer": the session was closed while it opened, ${step}; that step was stopped`,
    );
    const settled = (await readEventsFile(t.store.paths(session.id).events)).find(
      (e) => e.type === "turn.settled",
    );
    expect(settled?.data).toMatchObject({ status: "failed", error: { message: outcome.error?.message } });
    expect(sessionContainers(session.id)).toEqual([]);
  });
});
