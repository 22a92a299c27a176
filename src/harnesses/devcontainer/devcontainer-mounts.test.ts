// What a dev container's session may mount from this host: a working_dir inside Brain's home (another session's
// files, Brain's config) is refused before `devcontainer up`, with the fake Dev Container CLI and Docker.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { catalogFactories, fakeDevcontainer, fakeDocker, readCalls, useScratch } from "../../testing/nui.js";
import { echoRunnerPath } from "../process/descriptor.js";

const scratch = useScratch();
let state: string;
beforeEach(() => {
  state = scratch.scratch("fake-devcontainer-");
  process.env.FAKE_DOCKER_STATE = state;
  scratch.cleanups.push(() => {
    delete process.env.FAKE_DOCKER_STATE;
  });
});

describe("a dev container's working_dir", () => {
  it("is refused inside Brain's home (another session's files), before devcontainer up", async () => {
    const home = scratch.scratch("brain-devc-home-");
    const other = join(home, "sessions", "s-other", "native");
    mkdirSync(other, { recursive: true });
    const echo = { command: [process.execPath, echoRunnerPath()], env: { FAKE_DOCKER_STATE: state } };
    const { factories } = catalogFactories({
      brainHome: home,
      nui: { devcontainer: fakeDevcontainer, docker: fakeDocker },
      configDir: home,
      harnesses: { echo },
    });
    const { brain } = scratch.brain({ factories: factories.filter((f) => f.name === "devcontainer"), home });
    const session = await brain.create({
      harness: "devcontainer",
      config: { options: { innerHarness: "echo", working_dir: other } },
    });
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.error?.message).toBe(
      `harness "devcontainer": config.options.working_dir "${other}" is inside Brain's home ${home}; mounted into the session's container it would give the agent every session's files and Brain's config; choose a working directory outside Brain's home`,
    );
    expect(readCalls(state, "devcontainer-calls.jsonl")).toEqual([]);
  });
});
