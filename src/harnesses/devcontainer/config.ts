// The devcontainer.json Brain generates for a session (users do not write one): the image, the working dir
// and the session's native dir bind-mounted at their own absolute paths (so every path the inner harness is
// given means the same inside), Brain's install mounted read-only at its path (so the inner CLIs and runners
// Brain ships run inside). The inner harness's variables are not in it: the exec shim passes them to `docker exec`
// by name, their values in its environment, never in a file or argv.
import { join } from "node:path";
import { readAgentFile, replaceAgentFile } from "../agent-files.js";
import { bindMount } from "../bind-mount.js";

/** Node 20 on Debian 12, like the host Brain runs on, so Brain's node_modules work inside. */
export const DEFAULT_DEVCONTAINER_IMAGE = "mcr.microsoft.com/devcontainers/javascript-node:1-20-bookworm";

export interface DevcontainerSpec {
  sessionId: string;
  image: string;
  /** The agent's working directory on the host; the container's workspace folder. */
  workingDir: string;
  /** Host directories mounted at the same path (the session's native dir). */
  mounts: string[];
  /** Host directories mounted read-only at the same path (Brain's install). */
  readOnlyMounts: string[];
  remoteUser?: string;
  /** More `docker run` arguments (the session's label, `--network none`). */
  runArgs?: string[];
  /** The family's name, for the error refusing a path no `--mount` can carry; default "devcontainer". */
  harness?: string;
}

export interface DevcontainerJson {
  name: string;
  image: string;
  workspaceFolder: string;
  workspaceMount: string;
  mounts: string[];
  overrideCommand: boolean;
  /** False: with a remoteUser the CLI would otherwise build an image to change its uid (a builder, maybe a pull). */
  updateRemoteUserUID: boolean;
  runArgs?: string[];
  remoteUser?: string;
}

/** Throws when a path cannot be written into a `--mount` value (bindMount): before anything is started. */
export function devcontainerJson(spec: DevcontainerSpec): DevcontainerJson {
  const harness = spec.harness ?? "devcontainer";
  const mounts = [
    ...[...new Set(spec.mounts)]
      .filter((m) => m !== spec.workingDir)
      .map((m) => bindMount(m, harness, "the session's directory")),
    ...[...new Set(spec.readOnlyMounts)].map((m) => bindMount(m, harness, "Brain's install directory", true)),
  ];
  return {
    name: `brain-session-${spec.sessionId}`,
    image: spec.image,
    workspaceFolder: spec.workingDir,
    workspaceMount: bindMount(spec.workingDir, harness, "the working directory"),
    mounts,
    overrideCommand: true,
    updateRemoteUserUID: false,
    ...(spec.runArgs?.length ? { runArgs: spec.runArgs } : {}),
    ...(spec.remoteUser ? { remoteUser: spec.remoteUser } : {}),
  };
}

/** `<workspace folder>/.devcontainer/devcontainer.json`. */
export function devcontainerJsonPath(workspaceFolder: string): string {
  return join(workspaceFolder, ".devcontainer", "devcontainer.json");
}

/**
 * Writes the file (tmp + rename: `devcontainer exec` may read it while it is rewritten). The workspace folder is
 * mounted into no container, and neither name is followed if it is a link all the same.
 */
export async function writeDevcontainerJson(
  workspaceFolder: string,
  json: DevcontainerJson,
): Promise<string> {
  const file = devcontainerJsonPath(workspaceFolder);
  await replaceAgentFile(workspaceFolder, file, `${JSON.stringify(json, null, 2)}\n`);
  return file;
}

/** The session's devcontainer.json, as `writeDevcontainerJson` wrote it. */
export async function readDevcontainerJson(workspaceFolder: string): Promise<DevcontainerJson> {
  const file = devcontainerJsonPath(workspaceFolder);
  const text = await readAgentFile(workspaceFolder, file);
  if (text === undefined) throw new Error(`${file} does not exist; the dev container's session is not open`);
  return JSON.parse(text) as DevcontainerJson;
}
