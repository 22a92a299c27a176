// A runner whose command line in brain.config.json holds a credential shows it to every local user (ps,
// /proc/PID/cmdline): `brain` still loads the config, and says on stderr which runner and argument, and where the
// key goes instead, without the key.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("runner-argv");

it("warns about a runner's credential argument as the config loads, and works as before", () => {
  writeFileSync(
    join(cli.work, "brain.config.json"),
    JSON.stringify({
      harnesses: {
        leaky: { command: ["node", "runner.js", "--api-key", "literal-key-0123456789"] },
        clean: { command: "node runner.js --api-key-file /run/key --verbose" },
      },
    }),
  );
  const { code, err } = cli.run(["sessions", "ls"]);
  expect(code).toBe(0);
  const warnings = err.split("\n").filter((line) => line.startsWith("brain: warning:"));
  expect(warnings).toEqual([
    expect.stringMatching(
      /^brain: warning: harnesses\.leaky\.command\[3\] puts a credential \(--api-key\) on the command line, where every local user can read it .*Brain starts runner "leaky" with it\. Give it in harnesses\.leaky\.env instead/,
    ),
  ]);
  expect(err).not.toContain("literal-key-0123456789");
});
