// What a failed `devcontainer up` leaves for the next Brain's start: the run's record, whose label finds a
// container the daemon created after the failure's sweep (a `docker run` it had received when the CLI was killed).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { useFakeDocker } from "../../testing/nui.js";
import { containerRecordsDir, RUN_LABEL } from "../http/container-records.js";
import { WORKSPACE_DIR } from "./factory.js";

const scratch = useFakeDocker();
afterEach(() => {
  delete process.env.FAKE_DEVCONTAINER_FAIL_UP;
});

async function failedUp() {
  const home = scratch.scratch("brain-devc-home-");
  const t = scratch.brain({ factories: scratch.devcontainers(home), home });
  const session = await t.brain.create({
    harness: "devcontainer",
    config: { options: { innerHarness: "echo" } },
  });
  process.env.FAKE_DEVCONTAINER_FAIL_UP = "1";
  const settled = await (await session.prompt("x")).settled;
  return { home, settled, native: t.store.paths(session.id).native };
}

describe("a dev container's bounds", () => {
  it("are the operator's containers block, in the runArgs Brain writes (an image's metadata gives none)", async () => {
    const home = scratch.scratch("brain-devc-home-");
    const containers = { memory: "300m", pids: 77, cpus: 1.5 };
    const t = scratch.brain({ factories: scratch.devcontainers(home, undefined, containers), home });
    const session = await t.brain.create({
      harness: "devcontainer",
      config: { options: { innerHarness: "echo" } },
    });
    expect(await (await session.prompt("x")).settled).toMatchObject({ status: "completed" });
    const native = t.store.paths(session.id).native;
    const json = JSON.parse(
      readFileSync(join(native, WORKSPACE_DIR, ".devcontainer/devcontainer.json"), "utf8"),
    );
    expect(json.runArgs.join(" ")).toContain("--memory 300m --memory-swap 300m --pids-limit 77 --cpus 1.5");
  });
});

describe("a dev container whose up failed", () => {
  it("keeps its run's record, naming the label its container (if the daemon made one late) carries", async () => {
    const { home, settled, native } = await failedUp();
    expect(settled.error?.message).toMatch(/devcontainer up .* failed/);
    const records = readdirSync(containerRecordsDir(home));
    expect(records).toEqual([expect.stringMatching(/^run-[0-9a-f-]{36}\.json$/)]);
    const run = /^run-(.*)\.json$/.exec(records[0]!)![1];
    const json = JSON.parse(
      readFileSync(join(native, WORKSPACE_DIR, ".devcontainer/devcontainer.json"), "utf8"),
    );
    expect(json.runArgs).toEqual(expect.arrayContaining(["--label", `${RUN_LABEL}=${run}`]));
  });
});
