// What the exec shims share (the dev container's, src/harnesses/devcontainer/exec-shim.ts, and the docker
// sandbox's, src/harnesses/sandbox/docker-exec-shim.ts): their own flags before `--` and the command after it,
// the variables they forward into the container by name, and running the container's exec as if it were this
// process (stdio straight through, signals passed on, its exit status or signal taken as the shim's own).
import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Host-only variables that must not override the container's own. */
const HOST_ONLY = new Set([
  "PATH",
  "HOME",
  "TMPDIR",
  "TMP",
  "TEMP",
  "PWD",
  "OLDPWD",
  "SHLVL",
  "_",
  "SystemRoot",
  "WINDIR",
  "COMSPEC",
  "PATHEXT",
]);

/** The names of the variables in `env` the container gets (the harness's provider URL and key, its flags). */
export function forwardedNames(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((name) => !HOST_ONLY.has(name) && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    .sort();
}

/**
 * `docker exec` of `command` in `container`, run in `cwd` (as `user` when given), with the forwarded variables by
 * name: `-e NAME` takes the value from docker's own environment (this process's), so no value is in any argv.
 */
export function dockerExecArgs(
  container: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  command: string[],
  user?: string,
): string[] {
  const names = forwardedNames(env).flatMap((name) => ["-e", name]);
  return ["exec", "-i", "-w", cwd, ...(user ? ["-u", user] : []), ...names, container, ...command];
}

/** A shim's argv: its own `--flag value` pairs before `--`, the command after it. */
export function shimArgs(argv: string[]): { flag(name: string): string | undefined; command: string[] } {
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  return {
    flag: (name) => {
      const i = own.indexOf(name);
      return i === -1 ? undefined : own[i + 1];
    },
    command: dash === -1 ? [] : argv.slice(dash + 1),
  };
}

/** Brain's docker config directory, for a launcher's `--docker-config` (the one Brain's own docker commands read). */
export function hostDockerConfig(env: NodeJS.ProcessEnv = process.env): string {
  return env.DOCKER_CONFIG ?? join(homedir(), ".docker");
}

/**
 * The environment a shim runs the docker CLI with: the command's (its variables go in by name), but the docker
 * config directory Brain's (`given`, else this user's own), never the one under the command's HOME. That HOME
 * lies in the session's native dir, which the container writes: a config.json there (a context naming another
 * endpoint, tcp:// included) would send the exec, with every forwarded variable's value, wherever the agent
 * chose, out of a container that has no network.
 */
export function dockerEnv(env: NodeJS.ProcessEnv, given: string | undefined): NodeJS.ProcessEnv {
  return { ...env, DOCKER_CONFIG: given ?? join(userInfo().homedir, ".docker") };
}

/**
 * Runs `program args` in this process's place, with `env` (default this process's); `label` names the shim in
 * the error when it cannot start.
 */
export function relay(program: string, args: string[], label: string, env = process.env): void {
  const child = spawn(program, args, { stdio: "inherit", env });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("error", (err) => {
    process.stderr.write(`${label}: could not start ${program}: ${err.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

/** True when the module at `moduleUrl` is the program node runs (not imported by a test). */
export function isMain(moduleUrl: string): boolean {
  try {
    return !!process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
