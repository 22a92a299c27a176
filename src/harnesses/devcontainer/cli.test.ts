// `devcontainer up` as the harness runs it, on stand-in programs: what its errors say when it runs too long or
// fails with no outcome line, and how much of its log they quote.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useStandIns } from "../../testing/cli.js";
import { alive } from "../../testing/processes.js";
import { DevcontainerCli } from "./cli.js";

const standIns = useStandIns();

/** A stand-in Dev Container CLI that logs `lines` lines of progress on stderr, then runs `then`. */
function upThat(then: string, lines = 20_000) {
  const { bin, dir } = standIns.make(
    "devc-cli-",
    "devcontainer",
    `#!/usr/bin/env node
const log = (text) => require("node:fs").writeSync(2, text);
let progress = "";
for (let i = 0; i < ${lines}; i++) progress += "[" + i + " ms] step " + i + " of the image build\\n";
log(progress);
${then}
`,
  );
  return { cli: new DevcontainerCli({ devcontainer: bin, docker: "docker" }, process.env), dir };
}

describe("devcontainer up's errors", () => {
  it("says it did not finish in time, with the end of its log, not the whole log", async () => {
    const { cli, dir } = upThat("setTimeout(() => {}, 600_000);");
    const err = (await cli.up(dir, 4_000).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(
      /^devcontainer up --workspace-folder .* did not finish within 4 s and was stopped \(pulling or building the image can take that long: pull or build it beforehand\); its output ended with: /,
    );
    expect(err.message).toContain("step 19999 of the image build");
    expect(err.message).not.toContain("step 0 of");
    expect(err.message.length).toBeLessThan(3_000);
  });

  it("a failure without an outcome line quotes the end of its log", async () => {
    const { cli, dir } = upThat('log("Error: the daemon went away\\n"); process.exit(1);');
    const err = (await cli.up(dir, 60_000).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(
      /^devcontainer up --workspace-folder .* failed: .*Error: the daemon went away$/s,
    );
    expect(err.message.length).toBeLessThan(3_000);
  });

  it("a timeout stops what the CLI started too, before it returns (a docker run would create the container after the sweep)", async () => {
    const { cli, dir } = upThat(
      `const docker = require("node:child_process").spawn("sleep", ["600"], { stdio: "ignore" });
require("node:fs").writeFileSync(process.argv[4] + "/docker.pid", String(docker.pid));
setTimeout(() => {}, 600_000);`,
      1,
    );
    const err = (await cli.up(dir, 2_000).catch((e: Error) => e)) as Error;
    expect(err.message).toContain("did not finish within 2 s");
    const docker = Number(readFileSync(join(dir, "docker.pid"), "utf8"));
    standIns.pids.push(docker);
    expect(alive(docker)).toBe(false);
  });

  it("stops a lifecycle command that hangs after its own bound, naming it and the setting, not the image's pull", async () => {
    const { cli, dir } = upThat(
      `log("Container started\\n\\x1b[1mRunning the onCreateCommand from devcontainer.json...\\x1b[0m\\r\\n");
log("\\x1b[1mRunning the postCreate");
setTimeout(() => log("Command from devcontainer.json...\\x1b[0m\\r\\n"), 50);
setTimeout(() => {}, 600_000);`,
      1,
    );
    const err = (await cli
      .up(dir, 600_000, {
        ms: 2_000,
        setting: "lifecycleTimeout (seconds)",
        command: (hook, nth) => `${hook} #${nth}`,
      })
      .catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(
      /^devcontainer up --workspace-folder .*: the image's postCreateCommand postCreateCommand #1 \(from its devcontainer\.metadata label\) did not finish within 2 s and was stopped, its container removed; .* raise lifecycleTimeout \(seconds\); its output ended with: /s,
    );
    expect(err.message).not.toContain("pulling or building");
  });
});
