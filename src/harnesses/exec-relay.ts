// What the exec shims share (the dev container's, src/harnesses/devcontainer/exec-shim.ts, and the docker
// sandbox's, src/harnesses/sandbox/docker-exec-shim.ts): their own flags before `--` and the command after it,
// the variables they forward into the container by name, and running the container's exec as if it were this
// process (stdio straight through, signals passed on, its exit status or signal taken as the shim's own), with a
// guard inside that ends the command when the shim goes: `docker exec` passes no signal in, so a CLI whose shim
// was killed on the host (an interrupted or closed session) would go on working in the container.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeEnvFile } from "./env-file.js";

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

/** One command to run in a container: in `cwd`, as `user` when given, with the variables of `env` by name. */
export interface ContainerExec {
  container: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  command: string[];
  user?: string;
}

/** The forwarded variables with their values, for the container's `--env-file`. */
export function forwardedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    forwardedNames(env).flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])),
  );
}

/**
 * `docker exec` of the command, with the forwarded variables in `envFile` (written by relayExec): not `-e NAME`,
 * which takes the value from docker's own environment, where a DOCKER_* variable of the session's would also steer
 * docker itself; nor `-e NAME=VALUE`, in every local user's process listing. A shell in front records the
 * command's pid in `pidFile` for its guard and then becomes the command (a failed record only leaves it unguarded).
 */
export function dockerExecArgs(exec: ContainerExec, pidFile: string, envFile: string): string[] {
  const recordPid = ["sh", "-c", '{ echo $$ > "$0"; } 2>/dev/null; exec "$@"', pidFile];
  return [
    "exec",
    "-i",
    "-w",
    exec.cwd,
    ...userOf(exec),
    "--env-file",
    envFile,
    exec.container,
    ...recordPid,
    ...exec.command,
  ];
}

/**
 * The guard beside a command ($0: its pid file), as the same user. It waits on its stdin, which only the shim
 * holds: "exited" when the command ended, or the end of input when the shim went first, killed or with its
 * docker client gone. Then it ends the command's process group (a `docker exec` process leads its own), as a kill
 * of its group on the host would have: TERM, and KILL 5 s later if any of it is still there. `kill` is given the
 * group both ways: dash and bash need `--` before it, busybox refuses `--`.
 */
const GUARD = `read -r said
[ "$said" = exited ] && { rm -f "$0"; exit 0; }
for i in 1 2 3; do [ -s "$0" ] && break; sleep 1; done
p=$(cat "$0" 2>/dev/null) || exit 0
rm -f "$0"
group() { kill -s "$1" -- "-$p" 2>/dev/null || kill -s "$1" "-$p" 2>/dev/null; }
group TERM || exit 0
for i in 1 2 3 4 5; do sleep 1; group 0 || exit 0; done
group KILL
exit 0`;

export function guardExecArgs(exec: ContainerExec, pidFile: string): string[] {
  return ["exec", "-i", ...userOf(exec), exec.container, "sh", "-c", GUARD, pidFile];
}

const userOf = (exec: ContainerExec) => (exec.user ? ["-u", exec.user] : []);

/**
 * Runs the command in its container as if it were this process (see `relay`), with its guard beside it; `env` is
 * docker's own (dockerEnv). The container's variables are in a 0600 file, removed when the command ends.
 */
export function relayExec(docker: string, exec: ContainerExec, label: string, env: NodeJS.ProcessEnv): void {
  let envFile: ReturnType<typeof writeEnvFile>;
  try {
    envFile = writeEnvFile(forwardedEnv(exec.env), label);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  const pidFile = `/tmp/.brain-exec-${randomUUID()}`;
  const guard = spawn(docker, guardExecArgs(exec, pidFile), { stdio: ["pipe", "ignore", "ignore"], env });
  // A guard that cannot start leaves the command as unguarded as before; the command's own start says why.
  guard.on("error", () => {});
  guard.stdin?.on("error", () => {});
  relay(docker, dockerExecArgs(exec, pidFile, envFile.path), label, env, guard, envFile.remove);
}

/** A shim's argv: its own `--flag value` pairs before `--` (`flags`: each value of a repeated one), the command after it. */
export function shimArgs(argv: string[]): {
  flag(name: string): string | undefined;
  flags(name: string): string[];
  command: string[];
} {
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const flags = (name: string) =>
    own.flatMap((word, i) => (word === name && i % 2 === 0 ? [own[i + 1] ?? ""] : []));
  return {
    flag: (name) => flags(name)[0],
    flags,
    command: dash === -1 ? [] : argv.slice(dash + 1),
  };
}

/** Brain's docker config directory, for a launcher's `--docker-config` (the one Brain's own docker commands read). */
export function hostDockerConfig(env: NodeJS.ProcessEnv = process.env): string {
  return env.DOCKER_CONFIG ?? join(homedir(), ".docker");
}

/**
 * Of Brain's environment, what tells a shim's docker CLI where it and the session's daemon are: the command's own
 * environment is the runner protocol's minimal one, without them, so an exec would go to the default daemon, where
 * the container is not (or another of the same name is). Launcher words are in every local user's process
 * listing: none of these holds a secret (DOCKER_CONTENT_TRUST_*_PASSPHRASE and the like stay out).
 */
const DOCKER_LOCATION = [
  "PATH",
  "HOME",
  "XDG_RUNTIME_DIR",
  "TMPDIR",
  "SystemRoot",
  "DOCKER_HOST",
  "DOCKER_CONTEXT",
  "DOCKER_CERT_PATH",
  "DOCKER_TLS_VERIFY",
  "DOCKER_TLS",
  "DOCKER_API_VERSION",
];

/** Of `env`, the DOCKER_LOCATION variables it has. */
export function dockerLocation(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    DOCKER_LOCATION.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])),
  );
}

/** The launcher words that hand `env`'s (Brain's docker environment's) DOCKER_LOCATION to a shim's docker. */
export function dockerEnvFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(dockerLocation(env)).flatMap(([name, value]) => ["--docker-env", `${name}=${value}`]);
}

/**
 * The environment a shim runs the docker CLI with: Brain's `located` (the `--docker-env NAME=VALUE` words, see
 * DOCKER_LOCATION; an older launcher gave none, and docker is then found on the command's PATH), nothing of the
 * command's (its variables go into the container only, see dockerExecArgs), and the docker config directory
 * Brain's (`given`, else this user's own), never the one under the command's HOME. That HOME lies in the
 * session's native dir, which the container writes: a config.json there (a context naming another endpoint,
 * tcp:// included) would send the exec, with every forwarded variable's value, wherever the agent chose, out of a
 * container that has no network.
 */
export function dockerEnv(
  env: NodeJS.ProcessEnv,
  given: string | undefined,
  located: string[] = [],
): NodeJS.ProcessEnv {
  const brain = Object.fromEntries(
    located.map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
  );
  const found = located.length ? brain : { PATH: env.PATH };
  return { ...found, DOCKER_CONFIG: given ?? join(userInfo().homedir, ".docker") };
}

/**
 * Runs `program args` in this process's place, with `env` (default this process's); `label` names the shim in
 * the error when it cannot start; `ended` is called when the program has ended (or never started). A `guard`
 * (relayExec's) is told "exited" when the program ends with a status, and given up to 3 s to hear it; any other
 * end of this process ends the guard's input, and so the command.
 */
export function relay(
  program: string,
  args: string[],
  label: string,
  env = process.env,
  guard?: ChildProcess,
  ended: () => void = () => {},
): void {
  const child = spawn(program, args, { stdio: "inherit", env });
  const signals = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
  for (const signal of signals) {
    process.on(signal, () => {
      guard?.stdin?.end();
      child.kill(signal);
    });
  }
  child.on("error", (err) => {
    ended();
    process.stderr.write(`${label}: could not start ${program}: ${err.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    ended();
    if (signal) {
      guard?.stdin?.end();
      // This process's own handlers would take the signal again; it is to end this process, as it ended the child.
      for (const each of signals) process.removeAllListeners(each);
      process.kill(process.pid, signal);
      return;
    }
    const exit = () => process.exit(code ?? 1);
    if (!guard || guard.exitCode !== null || guard.signalCode !== null) return exit();
    guard.on("exit", exit);
    setTimeout(exit, 3000);
    guard.stdin?.end("exited\n");
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
