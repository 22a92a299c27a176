// Runs a CLI harness's command inside the session's sandbox container: the launcher words Brain puts in front
// of the CLI's command line.
//
//   node docker-exec-shim.js --docker PROGRAM --container ID -- COMMAND ARGS…
//
// becomes `PROGRAM exec -i -w <cwd> -e NAME… ID COMMAND ARGS…` with stdio passed straight through (the CLI's
// protocol is spoken across it). The working directory and Brain's install are mounted at the same paths inside,
// so the harness's paths hold. The variables the harness set for its CLI (provider URL and key, config dirs) go
// by name (`-e NAME` reads the value from docker's environment), never in argv.
import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { forwardedNames } from "../devcontainer/exec-shim.js";

export function parseShimArgs(argv: string[]): { docker: string; container: string; command: string[] } {
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  const value = (flag: string) => {
    const i = own.indexOf(flag);
    return i === -1 ? undefined : own[i + 1];
  };
  const container = value("--container");
  if (!container || command.length === 0) {
    throw new Error("usage: docker-exec-shim --docker PROGRAM --container ID -- COMMAND ARGS…");
  }
  return { docker: value("--docker") ?? "docker", container, command };
}

export function execArgs(
  container: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  command: string[],
): string[] {
  const names = forwardedNames(env).flatMap((name) => ["-e", name]);
  return ["exec", "-i", "-w", cwd, ...names, container, ...command];
}

function main(): void {
  const { docker, container, command } = parseShimArgs(process.argv.slice(2));
  const child = spawn(docker, execArgs(container, process.cwd(), process.env, command), {
    stdio: "inherit",
    env: process.env,
  });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("error", (err) => {
    process.stderr.write(`brain docker sandbox: could not start ${docker}: ${err.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

/** True when this file is the program node runs (not imported by a test). */
function isMain(): boolean {
  try {
    return (
      !!process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))
    );
  } catch {
    return false;
  }
}

if (isMain()) main();
