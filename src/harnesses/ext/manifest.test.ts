// Extension manifests and their installation: nui's format read as nui writes it, every mistake named with its
// file, field and fix, and `brain ext install | ls | rm` on a scratch $BRAIN_HOME.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { fixtures, root } from "../../testing/nui.js";
import { listExtensions, loadExtension } from "./extensions.js";
import { installExtension, removeExtension } from "./install.js";

/** These tests start several brain processes; on a busy machine each takes seconds to load. */
const CLI_TIMEOUT_MS = 120_000;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function scratch(): string {
  const dir = tempDir("brain-manifest-");
  dirs.push(dir);
  return dir;
}

const demoPy = join(fixtures, "extensions/demo-py");

/** A copy of demo-py with extension.yaml replaced by `manifest` (and other files as given). */
function variant(manifest: string, files: Record<string, string> = {}): string {
  const dir = join(scratch(), "variant");
  cpSync(demoPy, dir, { recursive: true });
  writeFileSync(join(dir, "extension.yaml"), manifest);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const HEADER = "apiVersion: nui.plmbr.dev/extension/v1\nname: demo-py\nversion: 1.0.0\n";
const HARNESSES = "contributions:\n  harnesses:\n    source:\n      file: harnesses.yaml\n";

describe("reading a manifest", () => {
  it("reads nui's format: harness list file, runtime, agents, and other contributions kept", () => {
    const ext = loadExtension(demoPy);
    expect(ext.harnesses.map((h) => h.ref)).toEqual(["ext:demo-py/echo", "ext:demo-py/reverse"]);
    expect(ext.runtime).toEqual({
      transport: "stdio",
      command: ["python3", "harness_host.py"],
      cwd: demoPy,
      env: {},
    });
    expect(ext.agents.definitions.map((a) => a.id)).toEqual(["echo-agent"]);
  });

  it("accepts nui's older apiVersion and expands the extension dir variable in the command", () => {
    const dir = variant(
      `apiVersion: loop.dev/extension/v1\nname: demo-py\nversion: "2"\n${HARNESSES}    runtime:\n      command: python3 \${NUI_EXTENSION_DIR}/harness_host.py\n`,
    );
    expect(loadExtension(dir).runtime?.command).toEqual(["python3", `${dir}/harness_host.py`]);
  });

  it.each([
    [
      "a wrong apiVersion",
      "apiVersion: v2\nname: x\nversion: 1\n",
      /field "apiVersion": .*use apiVersion: nui\.plmbr\.dev\/extension\/v1/,
    ],
    [
      "a missing version",
      "apiVersion: nui.plmbr.dev/extension/v1\nname: x\n",
      /field "version": .*e\.g\. version: "1\.0\.0"/,
    ],
    [
      "a bad name",
      "apiVersion: nui.plmbr.dev/extension/v1\nname: ../x\nversion: 1\n",
      /field "name": 1 to 64 letters/,
    ],
    [
      "an unknown transport",
      `${HEADER}${HARNESSES}    runtime:\n      transport: udp\n      command: [python3, h.py]\n`,
      /field "contributions\.harnesses\.runtime\.transport": .*stdio \(default\), tcp or http/,
    ],
    [
      "a stdio host without a command",
      `${HEADER}${HARNESSES}    runtime:\n      transport: stdio\n`,
      /runtime\.command": a stdio harness host needs its command/,
    ],
    [
      "an http host with neither command nor port",
      `${HEADER}${HARNESSES}    runtime:\n      transport: http\n`,
      /an http harness host needs a command .* or a port/,
    ],
    [
      "a harness list produced by a command",
      `${HEADER}contributions:\n  harnesses:\n    source:\n      command: [python3, list.py]\n    runtime:\n      command: [x]\n`,
      /source\.command\) are not supported by Brain; list them in a file/,
    ],
    [
      "a harness list file that is not there",
      `${HEADER}contributions:\n  harnesses:\n    source:\n      file: nope.yaml\n    runtime:\n      command: [x]\n`,
      /"contributions\.harnesses\.source\.file": nope\.yaml does not exist/,
    ],
    ["YAML that does not parse", "name: [unclosed\n", /not valid YAML\/JSON: .*line/],
  ])("names %s", (_what, manifest, message) => {
    expect(() => loadExtension(variant(manifest))).toThrow(message);
  });

  it("names a harness listed twice and a harness entry without an id", () => {
    const manifest = `${HEADER}${HARNESSES}    runtime:\n      command: [python3, h.py]\n`;
    expect(() =>
      loadExtension(variant(manifest, { "harnesses.yaml": "harnesses:\n  - id: a\n  - id: a\n" })),
    ).toThrow(/harness id "a" is listed twice/);
    expect(() =>
      loadExtension(variant(manifest, { "harnesses.yaml": "harnesses:\n  - displayName: A\n" })),
    ).toThrow(/harnesses\.yaml: field "harnesses\.0\.id": .*the id in ext:<extension>\/<id>/);
  });

  it("lists the good extensions and reports the broken ones", async () => {
    const home = scratch();
    await installExtension(demoPy, home);
    mkdirSync(join(home, "broken"));
    writeFileSync(join(home, "broken/extension.yaml"), "apiVersion: nope\n");
    const { extensions, problems } = listExtensions(home);
    expect(extensions.map((e) => e.name)).toEqual(["demo-py"]);
    expect(problems).toEqual([expect.stringMatching(/broken\/extension\.yaml: field "apiVersion"/)]);
  });

  // An extension linked in from where it is developed, whose directory was then moved: brain serve, brain
  // harnesses and brain ext ls all ended on the link's ENOENT, and brain ext rm said it was not installed.
  it("reports a link whose target is gone as one broken extension, and removes it by name", async () => {
    const home = scratch();
    await installExtension(demoPy, home);
    symlinkSync(join(home, "moved-away"), join(home, "dev-ext"));
    const { extensions, problems } = listExtensions(home);
    expect(extensions.map((e) => e.name)).toEqual(["demo-py"]);
    expect(problems).toEqual([
      expect.stringMatching(/dev-ext: cannot read it \(ENOENT.*remove it with brain ext rm dev-ext$/),
    ]);
    removeExtension("dev-ext", home);
    expect(listExtensions(home).problems).toEqual([]);
  });
});

describe("installing", () => {
  it("installs a directory, an extension in its one subdirectory, a .zip and a git URL; reinstalling replaces", async () => {
    const home = scratch();
    const direct = await installExtension(demoPy, home);
    expect(direct.dir).toBe(join(home, "demo-py"));
    expect(existsSync(join(home, "demo-py/harness_host.py"))).toBe(true);

    const wrapper = join(scratch(), "wrapper");
    cpSync(demoPy, join(wrapper, "inner"), { recursive: true });
    writeFileSync(join(wrapper, "inner/NEW"), "v2");
    await installExtension(wrapper, home);
    expect(readFileSync(join(home, "demo-py/NEW"), "utf8")).toBe("v2");

    const zipDir = scratch();
    execFileSync("python3", ["-m", "zipfile", "-c", join(zipDir, "demo.zip"), demoPy]);
    rmSync(join(home, "demo-py"), { recursive: true });
    await installExtension(join(zipDir, "demo.zip"), home);
    expect(existsSync(join(home, "demo-py/extension.yaml"))).toBe(true);

    const repo = join(scratch(), "repo");
    cpSync(demoPy, repo, { recursive: true });
    const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { stdio: "ignore" });
    git("init", "-q");
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".");
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "ext");
    rmSync(join(home, "demo-py"), { recursive: true });
    await installExtension(`file://${repo}`, home);
    expect(existsSync(join(home, "demo-py/harness_host.py"))).toBe(true);
    expect(existsSync(join(home, "demo-py/.git"))).toBe(false);
  });

  it("refuses what is not an extension, and removes by name", async () => {
    const home = scratch();
    await expect(installExtension(scratch(), home)).rejects.toThrow(
      /no extension\.yaml at its top or in one subdirectory/,
    );
    await expect(installExtension("/no/such/dir", home)).rejects.toThrow(
      /no such directory, \.zip file or git URL/,
    );
    await expect(installExtension(variant("apiVersion: x\n"), home)).rejects.toThrow(/field "apiVersion"/);
    expect(existsSync(join(home, "demo-py"))).toBe(false); // nothing half-installed
    await installExtension(demoPy, home);
    // A list outside the extension's directory is named, and the installed copy stays as it was.
    const outside = variant(`${HEADER}contributions:\n  harnesses:\n    source:\n      file: ../h.yaml\n`);
    writeFileSync(join(outside, "../h.yaml"), "harnesses:\n  - id: echo\n");
    await expect(installExtension(outside, home)).rejects.toThrow(
      /"contributions\.harnesses\.source\.file": \.\.\/h\.yaml is outside the extension's directory/,
    );
    expect(existsSync(join(home, "demo-py/harness_host.py"))).toBe(true);
    expect(() => removeExtension("nope", home)).toThrow(
      /no extension "nope" is installed; installed: demo-py/,
    );
    removeExtension("demo-py", home);
    expect(existsSync(join(home, "demo-py"))).toBe(false);
  });

  // A source that starts with "-" was read by git as one of its options (here --upload-pack, which names the
  // program git runs for the fetch), and git took the scratch clone dir for the repository.
  it("gives git a source that starts with - as the repository, never as an option", async () => {
    const home = scratch();
    const marker = join(scratch(), "ran");
    const source = `--upload-pack=touch ${marker};.git`;
    await expect(installExtension(source, home)).rejects.toThrow(
      `git clone failed: fatal: repository '${source}' does not exist`,
    );
    expect(existsSync(marker)).toBe(false);
  });
});

describe("brain ext", () => {
  function brain(home: string, ...args: string[]) {
    const r = spawnSync(process.execPath, [join(root, "bin/brain.js"), ...args], {
      env: { ...process.env, BRAIN_HOME: home },
      encoding: "utf8",
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  }

  it(
    "install, ls, harnesses, rm",
    () => {
      const home = scratch();
      const installed = brain(home, "ext", "install", demoPy);
      expect(installed.code).toBe(0);
      expect(installed.out).toContain("installed demo-py 1.0.0");
      expect(installed.out).toContain("harness ext:demo-py/echo  (stdio)");
      expect(installed.out).toContain("agent   ext:demo-py/echo-agent");
      const ls = brain(home, "ext", "ls");
      expect(ls.out).toMatch(/^demo-py {2}1\.0\.0 {2}Demo \(Python\)\n {2}ext:demo-py\/echo {2}stdio/);
      expect(brain(home, "harnesses").out.split("\n")).toEqual(
        expect.arrayContaining([
          "ext:demo-py/echo",
          "ext:demo-py/reverse",
          "remote",
          "docker",
          "devcontainer",
        ]),
      );
      const run = brain(home, "run", "--harness", "ext:demo-py/reverse", "olleh");
      expect(run.code).toBe(0);
      expect(run.out).toMatch(/^hello /);
      expect(brain(home, "ext", "rm", "demo-py").out).toBe("removed demo-py\n");
      const gone = brain(home, "ext", "rm", "demo-py");
      expect(gone.code).toBe(1);
      expect(gone.err).toMatch(/no extension "demo-py" is installed/);
      expect(brain(home, "ext", "install").err).toMatch(/ext install needs a SOURCE/);
    },
    CLI_TIMEOUT_MS,
  );
});
