// Brain's files in a directory an agent can write: a link or a FIFO planted at the name is never followed.
import { execFileSync } from "node:child_process";
import { lstatSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { tempDir } from "../testing/brain.js";
import { writeAgentFileSync } from "./agent-files.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("writeAgentFileSync writes a config in place, and refuses a link or a FIFO planted at its name", () => {
  dir = tempDir("brain-agent-files-");
  const outside = join(dir, "host.conf"); // a host file the agent cannot see
  writeFileSync(outside, "precious\n");
  const config = join(dir, "config.toml");

  writeAgentFileSync(config, "a = 1\nb = 2\n", 0o600);
  writeAgentFileSync(config, "a = 3\n", 0o600); // shorter: nothing of the old text is left
  expect(readFileSync(config, "utf8")).toBe("a = 3\n");
  expect(statSync(config).mode & 0o777).toBe(0o600);

  rmSync(config);
  symlinkSync(outside, config);
  expect(() => writeAgentFileSync(config, "stolen")).toThrow(
    /config\.toml is a symbolic link, not a file Brain wrote/,
  );
  expect(readFileSync(outside, "utf8")).toBe("precious\n");
  expect(lstatSync(config).isSymbolicLink()).toBe(true);

  rmSync(config);
  execFileSync("mkfifo", [config]);
  // No reader: without O_NONBLOCK the open would wait forever.
  expect(() => writeAgentFileSync(config, "x")).toThrow(/config\.toml is not a regular file/);
});

it("writeAgentFileSync keeps an existing file's mode unless given one", () => {
  dir = tempDir("brain-agent-files-");
  const session = join(dir, "session.jsonl");
  writeFileSync(session, "old\n", { mode: 0o640 });
  writeAgentFileSync(session, "new\n");
  expect(readFileSync(session, "utf8")).toBe("new\n");
  expect(statSync(session).mode & 0o777).toBe(0o640);
});
