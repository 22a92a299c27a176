// What a `sandbox: docker` container mounts, on a real Docker engine: every directory at its own path through
// `--mount`, so a working directory whose name holds a colon (which `-v` reads as a field separator) is mounted as
// it is, and one holding a comma (which `--mount` would read as one) is refused by name before anything starts.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { HarnessOptions } from "../../core/harness.js";
import { standIn, tempDir } from "../../testing/brain.js";
import { docker, ensureDockerEngine, sessionContainers } from "../../testing/docker-engine.js";
import { BASE_IMAGE, SandboxableFactory } from "./docker-sandbox.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

const base = tempDir("brain-sandbox-mounts-");
const install = join(base, "install");
const native = join(base, "native");

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
  mkdirSync(install);
  mkdirSync(native);
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A stand-in harness behind the sandbox, which calls no provider: the container is all these tests look at. */
const factory = () => {
  const plain = standIn("claude-code", {});
  return new SandboxableFactory(plain, () => plain, {
    shim: { node: "node", script: "shim.js" },
    installDir: install,
    needsProvider: false,
  });
};

const open = (sessionId: string, cwd: string) =>
  factory().open({
    sessionId,
    dir: native,
    provider: {},
    config: { options: { sandbox: "docker", cwd } },
  } as unknown as HarnessOptions);

interface Mount {
  Source: string;
  Destination: string;
  RW: boolean;
}

describe("a docker sandbox's mounts", () => {
  it("mounts a working directory whose name holds colons at its own path, and nothing where they point", async () => {
    // Read by `-v` as source, target and mode, it would have named /etc (and was refused as an invalid spec).
    const cwd = join(base, "w:/etc:rw");
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(cwd, "marker"), "mounted\n");
    const session = `s-colon-${process.pid}`;
    const harness = await open(session, cwd);
    try {
      const [id] = sessionContainers(session);
      const mounts = JSON.parse(docker("inspect", "-f", "{{json .Mounts}}", id!)) as Mount[];
      for (const mount of mounts) expect(mount.Destination).toBe(mount.Source);
      expect(mounts.map((m) => m.Destination)).not.toContain("/etc");
      expect(mounts.find((m) => m.Source === cwd)).toMatchObject({ RW: true });
      expect(mounts.find((m) => m.Source === native)).toMatchObject({ RW: true });
      expect(mounts.find((m) => m.Source === install)).toMatchObject({ RW: false });
      expect(docker("exec", id!, "cat", join(cwd, "marker"))).toBe("mounted");
    } finally {
      await harness.close();
    }
    expect(sessionContainers(session)).toEqual([]);
  });

  it("refuses a working directory whose name holds a comma, by name, before any container starts", async () => {
    // As --mount's value, `,source=/` would be a field of its own: the host's root mounted at the target.
    const cwd = join(base, "w,source=");
    mkdirSync(cwd);
    const session = `s-comma-${process.pid}`;
    await expect(open(session, cwd)).rejects.toThrow(
      `harness "claude-code": config.options.cwd ${JSON.stringify(cwd)} cannot be mounted into its container (Docker's --mount needs an absolute path without commas, quotes or line breaks)`,
    );
    expect(sessionContainers(session)).toEqual([]);
  });
});
