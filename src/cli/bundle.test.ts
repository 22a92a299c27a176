// The bundled CLI (dist/cli/, written by `npm run build`) on its own: an install holding bin/, dist/cli/ and the
// files Brain runs or serves by path (web/, the compiled runners, sdk/, node_modules), but no dist/src/, in
// another directory than the checkout. A chunk that reads a compiled module from disk, or a module that finds
// the install from its own location, fails here instead of on a user's machine.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../testing/brain.js";
import { root } from "../testing/brain-cli.js";

/** The copy of the install, its $BRAIN_HOME and a working directory outside both. */
let install: string;
let home: string;
let work: string;

function makeInstall(dir: string): void {
  cpSync(join(root, "package.json"), join(dir, "package.json"));
  cpSync(join(root, "bin"), join(dir, "bin"), { recursive: true });
  cpSync(join(root, "dist/cli"), join(dir, "dist/cli"), { recursive: true });
  for (const path of ["node_modules", "web", "runners", "sdk", "dist/runners", "dist/sdk"]) {
    symlinkSync(join(root, path), join(dir, path));
  }
}

function brain(args: string[]) {
  const result = spawnSync(process.execPath, [join(install, "bin/brain.js"), ...args], {
    cwd: work,
    env: { ...process.env, BRAIN_HOME: home, BRAIN_URL: "", BRAIN_TOKEN: "" },
    encoding: "utf8",
    input: "",
    timeout: 60_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

beforeAll(() => {
  install = tempDir("brain-bundle-install-");
  home = tempDir("brain-bundle-home-");
  work = tempDir("brain-bundle-work-");
  mkdirSync(join(install, "dist"));
  makeInstall(install);
});

afterAll(() => {
  for (const dir of [install, home, work]) rmSync(dir, { recursive: true, force: true });
});

describe("the bundled CLI, installed without dist/src", () => {
  it("--help loads every command's chunk", () => {
    const { code, out, err } = brain(["--help"]);
    expect(code, err).toBe(0);
    for (const command of ["run ", "serve", "conformance", "harnesses", "acp", "ext"])
      expect(out).toContain(command);
  });

  it("`brain run` starts the echo runner from the install it runs in", () => {
    const { code, out, err } = brain(["run", "hello"]);
    expect(code, err).toBe(0);
    expect(out).toContain("echo #1: hello");
  });

  it("`brain harnesses` finds the pinned CLIs in the install's node_modules/.bin", () => {
    const { code, out, err } = brain(["harnesses"]);
    expect(code, err).toBe(0);
    expect(out).toContain(join(install, "node_modules/.bin/claude"));
  });

  it("`brain serve` serves web/ and reports the install's version", async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      [join(install, "bin/brain.js"), "serve", "--port", "0", "--no-auth"],
      { cwd: work, env: { ...process.env, BRAIN_HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        let err = "";
        child.stderr!.on("data", (d: Buffer) => {
          err += d;
        });
        child.stdout!.on("data", (d: Buffer) => {
          out += d;
          const match = /brain daemon on (http:\/\/\S+)/.exec(out);
          if (match) resolve(match[1]!);
        });
        child.on("exit", (code) => reject(new Error(`brain serve exited ${code}: ${err}`)));
      });
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toBe(readFileSync(join(root, "web/index.html"), "utf8"));
      expect((await fetch(`${url}/ui/app.js`)).status).toBe(200);
      const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
      const document = (await (await fetch(`${url}/openapi.json`)).json()) as { info: { version: string } };
      expect(document.info.version).toBe(version);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  });
});
