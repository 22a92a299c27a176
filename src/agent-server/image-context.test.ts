// What goes into a CLI family's agent image, and the hash that decides when it is rebuilt.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { root } from "../testing/nui.js";
import { appFiles, appHash, depsPlan, type LockPackages, lockClosure, outermost } from "./image-context.js";

const LOCK: LockPackages = {
  "": { dependencies: { a: "1" } },
  "node_modules/a": {
    version: "1.0.0",
    dependencies: { b: "^2", c: "1" },
    optionalDependencies: { "a-mac": "1" },
  },
  "node_modules/a-mac": { version: "1.0.0" },
  "node_modules/b": { version: "1.0.0" },
  "node_modules/a/node_modules/b": { version: "2.0.0", peerDependencies: { c: "1" } },
  "node_modules/c": { version: "1.0.0" },
  "node_modules/cli": { version: "3.0.0", dependencies: { b: "1" } },
};
const notMac = (path: string) => !path.endsWith("a-mac");

describe("lockClosure", () => {
  it("resolves each dependency at the nearest node_modules up the tree, and skips what is not installed", () => {
    expect([...lockClosure(LOCK, ["a"], notMac)].sort()).toEqual([
      "node_modules/a",
      "node_modules/a/node_modules/b",
      "node_modules/c",
    ]);
    expect([...lockClosure(LOCK, ["cli"], notMac)].sort()).toEqual(["node_modules/b", "node_modules/cli"]);
  });

  it("names a root package that is not installed, and how to install it", () => {
    expect(() => lockClosure(LOCK, ["a-mac"], notMac)).toThrow(
      "a-mac is not installed: run npm ci (package-lock.json pins it)",
    );
  });
});

it("outermost keeps a package's directory, not the nested ones it holds, nor those of another layer", () => {
  const closure = ["node_modules/a", "node_modules/a/node_modules/b", "node_modules/ab", "node_modules/c"];
  expect(outermost(closure)).toEqual(["node_modules/a", "node_modules/ab", "node_modules/c"]);
  expect(outermost(closure, new Set(["node_modules/c"]))).toEqual(["node_modules/a", "node_modules/ab"]);
});

describe("depsPlan on this install", () => {
  it("puts Brain's runtime dependencies in one layer and the family's CLI with its program in another", () => {
    const plan = depsPlan("codex", root);
    expect(plan.runtime).toContain("node_modules/zod");
    expect(plan.runtime).not.toContain("node_modules/@openai/codex");
    expect(plan.cli).toEqual(
      expect.arrayContaining(["node_modules/@openai/codex", "node_modules/.bin/codex"]),
    );
    for (const path of plan.cli) expect(plan.runtime.some((r) => path.startsWith(`${r}/`))).toBe(false);
    expect(depsPlan("codex", root).hash).toBe(plan.hash);
    expect(depsPlan("pi-cli", root).hash).not.toBe(plan.hash);
  });

  it("names the families it can build for an unknown one", () => {
    expect(() => depsPlan("gemini", root)).toThrow(
      'no agent image for "gemini"; build one of claude-code, codex, opencode, pi-cli',
    );
  });
});

describe("the app layer", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir!, path)), { recursive: true });
    writeFileSync(join(dir!, path), text);
  };

  it("carries compiled JavaScript and package.json only, and its hash follows their contents", () => {
    dir = mkdtempSync(join(tmpdir(), "image-context-"));
    write("docker/agent-server.Dockerfile", "FROM x\n");
    write("package.json", "{}");
    write("dist/src/a.js", "1");
    write("dist/src/a.js.map", "{}");
    write("dist/src/a.test.js", "");
    write("dist/sdk/ts/b.js", "2");
    const files = appFiles(dir);
    expect(files).toEqual(["dist/sdk/ts/b.js", "dist/src/a.js", "package.json"]);
    const before = appHash(files, dir);
    write("dist/src/a.js.map", "{1}");
    expect(appHash(appFiles(dir), dir)).toBe(before);
    write("dist/src/a.js", "2");
    expect(appHash(appFiles(dir), dir)).not.toBe(before);
  });

  it("says to build first when dist/ is missing", () => {
    dir = mkdtempSync(join(tmpdir(), "image-context-"));
    expect(() => appFiles(dir)).toThrow(`no dist/src in ${dir}: run npm run build first`);
  });
});
