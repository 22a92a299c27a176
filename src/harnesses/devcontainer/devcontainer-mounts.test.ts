// What of this host reaches a dev container's session: a working_dir inside Brain's home (another session's files,
// Brain's config) is refused before `devcontainer up`, and `devcontainer up` does not get Brain's environment.
// With the fake Dev Container CLI and Docker, or a script that records its environment.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readCalls, useFakeDocker } from "../../testing/nui.js";
import { devcontainerShim, installDir } from "../nui/install-paths.js";
import { DevcontainerFactory } from "./factory.js";

const scratch = useFakeDocker();

/** Opens an "echo" dev container session on a bridge network, `program` standing in for docker and devcontainer. */
function openWith(program: string, sessionId: string, native: string) {
  const factory = new DevcontainerFactory({
    inner: () => undefined,
    innerNames: () => ["echo"],
    shim: { node: process.execPath, script: devcontainerShim() },
    installDir: installDir(),
    programs: { devcontainer: program, docker: program },
    uid: 0,
  });
  return factory.open({
    sessionId,
    dir: native,
    provider: {},
    config: { options: { innerHarness: "echo", network: "bridge" } },
  } as never);
}

describe("a dev container's working_dir", () => {
  it("is refused inside Brain's home (another session's files), before devcontainer up", async () => {
    const home = scratch.scratch("brain-devc-home-");
    const other = join(home, "sessions", "s-other", "native");
    mkdirSync(other, { recursive: true });
    const { brain } = scratch.brain({ factories: scratch.devcontainers(home), home });
    const session = await brain.create({
      harness: "devcontainer",
      config: { options: { innerHarness: "echo", working_dir: other } },
    });
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.error?.message).toBe(
      `harness "devcontainer": config.options.working_dir "${other}" is inside Brain's home ${home}; mounted into the session's container it would give the agent every session's files and Brain's config; choose a working directory outside Brain's home`,
    );
    expect(readCalls(scratch.fake.state, "devcontainer-calls.jsonl")).toEqual([]);
  });
});

describe("devcontainer up", () => {
  it("runs without Brain's own variables: an image's localEnv references cannot take them into the container", async () => {
    const dir = scratch.scratch("brain-devc-env-");
    const seen = join(dir, "up-env");
    // Docker and the Dev Container CLI both: `info` and the sweep's `ps` answer, `up` writes its environment.
    const program = join(dir, "docker-and-devcontainer");
    writeFileSync(
      program,
      `#!/bin/sh\ncase "$1" in\n  up) env > ${seen}; echo '{"outcome":"error","message":"recorded"}'; exit 1;;\n  *) exit 0;;\nesac\n`,
    );
    chmodSync(program, 0o755);
    const native = join(dir, "sessions", "s-env", "native");
    mkdirSync(native, { recursive: true });
    process.env.BRAIN_TEST_HOST_SECRET = "secret-of-brains-host";
    scratch.cleanups.push(() => {
      delete process.env.BRAIN_TEST_HOST_SECRET;
    });
    const open = openWith(program, "s-env", native);
    await expect(open).rejects.toThrow(/devcontainer up .* failed: recorded/);
    const env = readFileSync(seen, "utf8");
    expect(env).toContain(`PATH=${process.env.PATH}`);
    expect(env).not.toContain("BRAIN_TEST_HOST_SECRET");
  });
});

describe("a session's directory a --mount value cannot carry", () => {
  it("is refused by name before devcontainer up, not written as extra mount fields", async () => {
    const dir = scratch.scratch("brain-devc-comma-");
    const ran = join(dir, "up-ran");
    const program = join(dir, "docker-and-devcontainer");
    writeFileSync(
      program,
      `#!/bin/sh\ncase "$1" in\n  up) touch ${ran}; echo '{"outcome":"error","message":"ran"}'; exit 1;;\n  *) exit 0;;\nesac\n`,
    );
    chmodSync(program, 0o755);
    // A home whose path holds a comma: `source=/` after it would have been a field of the bind of its own.
    const native = join(dir, "home,source=", "sessions", "s-comma", "native");
    mkdirSync(native, { recursive: true });
    // The tools dir is made under the temp dir; what a refused open leaves there is seen in one of its own.
    const temp = scratch.scratch("brain-devc-tmp-");
    const before = process.env.TMPDIR;
    process.env.TMPDIR = temp;
    scratch.cleanups.push(() => {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    });
    const open = openWith(program, "s-comma", native);
    await expect(open).rejects.toThrow(
      `harness "devcontainer": the working directory ${JSON.stringify(join(native, "inner"))} cannot be mounted into its container (Docker's --mount needs an absolute path without commas, quotes or line breaks)`,
    );
    expect(existsSync(ran)).toBe(false);
    expect(readdirSync(temp)).toEqual([]);
  });
});
