// The engine script on a machine where it cannot work: a clear failure with what to install, never a pass.
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ensureDockerEngine } from "./docker-engine.js";

it("fails with the install command when there is no Docker engine and no apt-get", async () => {
  // A PATH with the few programs the script itself needs, and neither dockerd nor apt-get.
  const bin = mkdtempSync(join(tmpdir(), "brain-no-docker-"));
  for (const program of ["id", "bash"]) symlinkSync(`/usr/bin/${program}`, join(bin, program));
  try {
    await expect(ensureDockerEngine({ PATH: bin })).rejects.toThrow(
      /no Docker engine and no apt-get: install Docker .*\ninstall it with: apt-get install -y --no-install-recommends docker.io busybox-static/s,
    );
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});
