// The CLI's HOME and default working directory under the native dir: made by Brain, and never a link an agent
// swapped in (the CLI runs on the host, and would work and write wherever the link leads).
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { cliEnvironment } from "./environment.js";
import { workingDir } from "./options.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("makes <native>/work and <native>/home, and refuses either when it is a link to a host directory", () => {
  dir = tempDir("brain-native-dirs-");
  const native = join(dir, "native");
  mkdirSync(native);
  expect(workingDir("codex", native, {})).toBe(join(native, "work"));
  expect(cliEnvironment(native, {}).HOME).toBe(join(native, "home"));
  expect(lstatSync(join(native, "work")).isDirectory()).toBe(true);
  expect(lstatSync(join(native, "home")).isDirectory()).toBe(true);

  const outside = join(dir, "root-home");
  mkdirSync(outside);
  for (const name of ["work", "home"]) {
    rmSync(join(native, name), { recursive: true });
    symlinkSync(outside, join(native, name));
  }
  expect(() => workingDir("codex", native, {})).toThrow(
    /native\/work is a symbolic link, not a file Brain wrote; remove it/,
  );
  expect(() => cliEnvironment(native, {})).toThrow(
    /native\/home is a symbolic link, not a file Brain wrote; remove it/,
  );
  expect(readdirSync(outside)).toEqual([]);
  expect(existsSync(join(outside, "work"))).toBe(false);
});
