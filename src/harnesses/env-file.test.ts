// What docker's --env-file can carry, and what it cannot (said by the variable's name, before any docker runs).
import { randomUUID } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempName } from "../core/checkpoints/temps.js";
import { killedPid } from "../core/checkpoints/testing.js";
import { envFileText, MAX_ENV_LINE_BYTES, writeEnvFile } from "./env-file.js";

describe("a container's env file", () => {
  it("holds NAME=VALUE a line, values untouched (spaces, '=', '#', quotes), 0600 in a 0700 directory", () => {
    const env = { A: " spaced ", B: "x=y#z", C: "'q\"", EMPTY: "" };
    const file = writeEnvFile(env, "docker");
    try {
      expect(readFileSync(file.path, "utf8")).toBe(`A= spaced \nB=x=y#z\nC='q"\nEMPTY=\n`);
      expect(statSync(file.path).mode & 0o777).toBe(0o600);
      expect(statSync(dirname(file.path)).mode & 0o777).toBe(0o700);
    } finally {
      file.remove();
    }
    expect(existsSync(dirname(file.path))).toBe(false);
  });

  it("refuses, by name, what docker would misread or cut", () => {
    expect(() => envFileText({ KEY: "a\nb" }, "docker")).toThrow(/"KEY" .*line break/);
    expect(() => envFileText({ KEY: "ends\r" }, "docker")).toThrow(/"KEY" .*line break/);
    for (const name of ["", "A=B", "A B", "#A"]) {
      expect(() => envFileText({ [name]: "v" }, "docker")).toThrow(/a name must be non-empty/);
    }
    const big = "x".repeat(MAX_ENV_LINE_BYTES - 2);
    expect(envFileText({ B: big }, "docker")).toBe(`B=${big}\n`);
    expect(() => envFileText({ BIG: big }, "docker")).toThrow(/"BIG" .*65537 bytes.*mounted file/);
  });

  // A SIGKILLed exec shim cannot remove its file: the values (a provider key) would stay on disk for good.
  it("removes the files a killed writer left, and never a live writer's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-env-test-"));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = dir;
    try {
      const left = (name: string) => {
        mkdirSync(join(dir, name), { mode: 0o700 });
        writeFileSync(join(dir, name, "env"), "KEY=sk-left-behind\n");
        return name;
      };
      const dead = left(`brain-env.tmp-${await killedPid()}-00000000-${randomUUID()}`);
      const live = left(`brain-env.${tempName("tmp")}`);
      const other = left("unrelated");
      const file = writeEnvFile({ A: "1" }, "docker");
      const names = readdirSync(dir);
      expect(names).not.toContain(dead);
      expect(names).toEqual(expect.arrayContaining([live, other, dirname(file.path).slice(dir.length + 1)]));
      file.remove();
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
