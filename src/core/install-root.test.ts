import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findInstallRoot, installRoot } from "./install-root.js";

describe("Brain's install root", () => {
  const dir = join(tmpdir(), `brain-install-root-${process.pid}`);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is the nearest directory whose package.json is Brain's, passing another package's (runners/*)", () => {
    mkdirSync(join(dir, "brain/runners/pi/dist"), { recursive: true });
    writeFileSync(join(dir, "brain/package.json"), JSON.stringify({ name: "brain" }));
    writeFileSync(join(dir, "brain/runners/pi/package.json"), JSON.stringify({ name: "brain-runner-pi" }));
    expect(findInstallRoot(join(dir, "brain/runners/pi/dist"))).toBe(join(dir, "brain"));
  });

  it("says what it looked for when there is none", () => {
    mkdirSync(join(dir, "elsewhere"), { recursive: true });
    expect(() => findInstallRoot(join(dir, "elsewhere"))).toThrow(/package\.json \(name "brain"\) is not in/);
  });

  it("is this checkout when run from source", () => {
    expect(installRoot()).toBe(join(import.meta.dirname, "../.."));
  });
});
