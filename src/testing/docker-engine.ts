// A real Docker engine for the container tests: scripts/docker-engine.sh installs and starts it when missing
// and builds the project's base image, from no registry. A machine where that is impossible fails these tests
// with what to install; it never skips them into a false green.
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { installDir } from "../harnesses/nui/install-paths.js";
import { BASE_IMAGE } from "../harnesses/sandbox/docker-sandbox.js";

/** The project (from source or from dist/). */
const root = installDir();

const run = promisify(execFile);

export const INSTALL_HINT =
  "apt-get install -y --no-install-recommends docker.io busybox-static (as root; then scripts/docker-engine.sh starts dockerd)";

/** Runs the engine script; resolves with the base image's tag. `env`: the script's environment (tests). */
export async function ensureDockerEngine(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  try {
    const { stdout } = await run("bash", [`${root}/scripts/docker-engine.sh`], {
      cwd: root,
      timeout: 600_000,
      env,
    });
    const tag = stdout.trim().split("\n").at(-1) ?? "";
    if (!tag) throw new Error("the script printed no image tag");
    return tag;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(
      `these tests need a Docker engine and scripts/docker-engine.sh could not provide one: ${(e.stderr || e.message).trim()}\ninstall it with: ${INSTALL_HINT}`,
    );
  }
}

/** `docker …` for test set-up and checks; stdout trimmed. */
export function docker(...args: string[]): string {
  return execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** Ids of every container, running or not, labelled with this Brain session. */
export function sessionContainers(sessionId: string): string[] {
  return docker("ps", "-aq", "--filter", `label=brain.session=${sessionId}`).split("\n").filter(Boolean);
}

/**
 * An image `tag` made from `base` with `cmd` as its command (docker commit of a created container: no builder,
 * no registry). Rebuilt each run, since the command may have changed.
 */
export function imageWithCommand(base: string, tag: string, cmd: string[]): string {
  const id = docker("create", base);
  try {
    docker("commit", "-c", `CMD ${JSON.stringify(cmd)}`, id, tag);
  } finally {
    docker("rm", "-f", id);
  }
  return tag;
}

/**
 * `tag`: the base image with `metadata` as its devcontainer.metadata label (docker commit: no builder). A `$` is
 * escaped: the LABEL instruction would substitute `${NAME}` itself, and the label is to hold it as written.
 */
export function imageWithMetadata(tag: string, metadata: object[]): void {
  const made = docker("create", BASE_IMAGE);
  try {
    const value = JSON.stringify(JSON.stringify(metadata)).replaceAll("$", "\\$");
    docker("commit", "-c", `LABEL devcontainer.metadata=${value}`, made, tag);
  } finally {
    docker("rm", "-f", made);
  }
}

/**
 * `devcontainer up` first fetches a control manifest from the Dev Containers site; a fresh copy in its cache (trusted
 * for five minutes by its mtime) keeps it off the network. Before each test that runs it.
 */
export function devcontainerCliOffline(): void {
  const dir = join(tmpdir(), `devcontainercli-${userInfo().username}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "control-manifest.json");
  writeFileSync(file, JSON.stringify({ disallowedFeatures: [], featureAdvisories: [] }));
  utimesSync(file, new Date(), new Date());
}
