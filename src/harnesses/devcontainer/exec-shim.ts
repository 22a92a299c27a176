// Runs an inner harness's command inside the session's dev container: the launcher words Brain puts in front
// of a CLI or runner command line.
//
//   node exec-shim.js --docker PROGRAM [--docker-config DIR] [--docker-env NAME=VALUE…] --container ID --workspace-folder DIR [--user USER] -- COMMAND ARGS…
//
// becomes `PROGRAM exec -i -w <cwd> [-u <remoteUser>] --env-file FILE ID COMMAND ARGS…` (and a guard beside it,
// see src/harnesses/exec-relay.ts), with stdio passed straight through (the inner protocol is spoken across it).
// The environment the inner harness built for its command (its provider base URL and key, its flags) goes in FILE
// (0600 in a 0700 dir, removed when the command ends), never in argv nor in docker's own environment, which is
// Brain's (the --docker-env words). Not `devcontainer exec`: it hands the config's `remoteEnv` to its own
// `docker exec` as `-e NAME=VALUE`, which put the provider key in a host process's argv for any local user to read.
// The command runs in its cwd when that is mounted inside, else in the workspace folder, as USER: the remoteUser
// `devcontainer up` reported (the config's, else the image label's remoteUser or containerUser, else the image's
// user), which is who `devcontainer exec` would run it as. Docker reads its config from the
// docker config DIR (Brain's), not from under the command's HOME, which the container can write.
import { dockerEnv, isMain, relayExec, shimArgs } from "../exec-relay.js";
import { type DevcontainerJson, readDevcontainerJson } from "./config.js";

export function parseShimArgs(argv: string[]): {
  docker: string;
  dockerConfig: string | undefined;
  /** Brain's NAME=VALUE pairs that locate docker and its daemon (dockerEnvFlags). */
  dockerLocation: string[];
  container: string;
  workspaceFolder: string;
  /** The user `devcontainer up` said the container's commands run as (its remoteUser). */
  user: string | undefined;
  command: string[];
} {
  const { flag, flags, command } = shimArgs(argv);
  const container = flag("--container");
  const workspaceFolder = flag("--workspace-folder");
  if (!container || !workspaceFolder || command.length === 0) {
    throw new Error(
      "usage: exec-shim --docker PROGRAM [--docker-config DIR] [--docker-env NAME=VALUE…] --container ID --workspace-folder DIR [--user USER] -- COMMAND ARGS…",
    );
  }
  return {
    docker: flag("--docker") ?? "docker",
    dockerConfig: flag("--docker-config"),
    dockerLocation: flags("--docker-env"),
    container,
    workspaceFolder,
    user: flag("--user"),
    command,
  };
}

/** The container paths devcontainer.json mounts: the workspace folder and each mount's target. */
export function mountedPaths(json: DevcontainerJson): string[] {
  const targets = json.mounts.flatMap((mount) => {
    const target = mount.split(",").find((part) => part.startsWith("target="));
    return target ? [target.slice("target=".length)] : [];
  });
  return [json.workspaceFolder, ...targets];
}

/** `cwd` when it is mounted inside (at its own path), else the container's workspace folder. */
export function directoryInside(json: DevcontainerJson, cwd: string): string {
  const mounted = mountedPaths(json).some((root) => cwd === root || cwd.startsWith(`${root}/`));
  return mounted ? cwd : json.workspaceFolder;
}

async function main(): Promise<void> {
  const { docker, dockerConfig, dockerLocation, container, workspaceFolder, user, command } = parseShimArgs(
    process.argv.slice(2),
  );
  const json = await readDevcontainerJson(workspaceFolder);
  const cwd = directoryInside(json, process.cwd());
  // `up`'s remoteUser merges the image's label with the config, as `devcontainer exec` would run as.
  const remoteUser = user ?? json.remoteUser;
  relayExec(
    docker,
    { container, cwd, env: process.env, command, ...(remoteUser ? { user: remoteUser } : {}) },
    "brain devcontainer exec",
    dockerEnv(process.env, dockerConfig, dockerLocation),
  );
}

if (isMain(import.meta.url)) {
  await main().catch((err: Error) => {
    process.stderr.write(`brain devcontainer exec: ${err.message}\n`);
    process.exit(1);
  });
}
