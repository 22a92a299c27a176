// Paths inside Brain's own install.
import { join } from "node:path";
import { installRoot } from "../../core/install-root.js";

/** The install Brain runs from: mounted read-only into dev containers so its runners and CLIs run inside. */
export function installDir(): string {
  return installRoot();
}

/** The compiled exec shim that runs a command in a session's dev container (`docker exec`). */
export function devcontainerShim(): string {
  return join(installRoot(), "dist/src/harnesses/devcontainer/exec-shim.js");
}

/** The compiled shim that runs a command through `docker exec` in a session's sandbox container. */
export function dockerExecShim(): string {
  return join(installRoot(), "dist/src/harnesses/sandbox/docker-exec-shim.js");
}
