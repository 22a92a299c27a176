// Paths inside Brain's own install, whether this module runs compiled (dist/src/harnesses/nui) or from source
// under vitest (src/harnesses/nui).
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, here.includes(`${sep}dist${sep}`) ? "../../../.." : "../../..");

/** The install Brain runs from: mounted read-only into dev containers so its runners and CLIs run inside. */
export function installDir(): string {
  return projectRoot;
}

/** The compiled exec shim that runs a command through `devcontainer exec`. */
export function devcontainerShim(): string {
  return join(projectRoot, "dist/src/harnesses/devcontainer/exec-shim.js");
}

/** The compiled shim that runs a command through `docker exec` in a session's sandbox container. */
export function dockerExecShim(): string {
  return join(projectRoot, "dist/src/harnesses/sandbox/docker-exec-shim.js");
}
