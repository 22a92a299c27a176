// Runs a CLI harness's command inside the session's sandbox container: the launcher words Brain puts in front
// of the CLI's command line.
//
//   node docker-exec-shim.js --docker PROGRAM [--docker-config DIR] [--docker-env NAME=VALUE…] --container ID -- COMMAND ARGS…
//
// becomes `PROGRAM exec -i -w <cwd> --env-file FILE ID COMMAND ARGS…` (and a guard beside it) with stdio passed
// straight through (the CLI's protocol is spoken across it). The working directory and Brain's install are mounted
// at the same paths inside, so the harness's paths hold. The variables the harness set for its CLI (provider URL
// and key, config dirs) go in FILE (0600, removed when the command ends), never in argv nor in docker's own
// environment, which is Brain's (the --docker-env words). Docker reads its config from DIR (Brain's), not from
// under the CLI's HOME, which the container can write.
import { type ContainerExec, dockerEnv, isMain, relayExec, shimArgs } from "../exec-relay.js";

export function parseShimArgs(argv: string[]): {
  docker: string;
  dockerConfig: string | undefined;
  /** Brain's NAME=VALUE pairs that locate docker and its daemon (dockerEnvFlags). */
  dockerLocation: string[];
  container: string;
  command: string[];
} {
  const { flag, flags, command } = shimArgs(argv);
  const container = flag("--container");
  if (!container || command.length === 0) {
    throw new Error(
      "usage: docker-exec-shim --docker PROGRAM [--docker-config DIR] [--docker-env NAME=VALUE…] --container ID -- COMMAND ARGS…",
    );
  }
  return {
    docker: flag("--docker") ?? "docker",
    dockerConfig: flag("--docker-config"),
    dockerLocation: flags("--docker-env"),
    container,
    command,
  };
}

/** The command as this shim runs it: in this process's working directory (mounted at its own path inside). */
export function execOf(container: string, env: NodeJS.ProcessEnv, command: string[]): ContainerExec {
  return { container, cwd: process.cwd(), env, command };
}

function main(): void {
  const { docker, dockerConfig, dockerLocation, container, command } = parseShimArgs(process.argv.slice(2));
  relayExec(
    docker,
    execOf(container, process.env, command),
    "brain docker sandbox",
    dockerEnv(process.env, dockerConfig, dockerLocation),
  );
}

if (isMain(import.meta.url)) main();
