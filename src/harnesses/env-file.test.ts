// What docker's --env-file can carry, and what it cannot (said by the variable's name, before any docker runs).
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
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
});
