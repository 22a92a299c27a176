// Runs an inner harness's command inside the session's dev container: the launcher words Brain puts in front
// of a CLI or runner command line.
//
//   node exec-shim.js --devcontainer PROGRAM --workspace-folder DIR -- COMMAND ARGS…
//
// becomes `PROGRAM exec --workspace-folder DIR COMMAND ARGS…`, with stdio passed straight through (the inner
// protocol is spoken across it). The environment the inner harness built for its command (its provider base
// URL and key, its flags) is named in the devcontainer.json's `remoteEnv` as `${localEnv:NAME}` and handed to
// `devcontainer exec` in its environment, so values never appear in argv or on disk. `devcontainer exec` runs
// in the workspace folder; a command started in another mounted directory (a CLI's cwd) is run there.
import { spawn } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { execArgs } from "./cli.js";
import { type DevcontainerJson, devcontainerJsonPath, localEnvRef, writeDevcontainerJson } from "./config.js";

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

export function forwardedNames(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((name) => !HOST_ONLY.has(name) && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    .sort();
}

export function parseShimArgs(argv: string[]): {
  devcontainer: string;
  workspaceFolder: string;
  command: string[];
} {
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  const value = (flag: string) => {
    const i = own.indexOf(flag);
    return i === -1 ? undefined : own[i + 1];
  };
  const devcontainer = value("--devcontainer") ?? "devcontainer";
  const workspaceFolder = value("--workspace-folder");
  if (!workspaceFolder || command.length === 0) {
    throw new Error("usage: exec-shim --devcontainer PROGRAM --workspace-folder DIR -- COMMAND ARGS…");
  }
  return { devcontainer, workspaceFolder, command };
}

/** The container paths devcontainer.json mounts: the workspace folder and each mount's target. */
export function mountedPaths(json: DevcontainerJson): string[] {
  const targets = json.mounts.flatMap((mount) => {
    const target = mount.split(",").find((part) => part.startsWith("target="));
    return target ? [target.slice("target=".length)] : [];
  });
  return [json.workspaceFolder, ...targets];
}

/** The command, run in `cwd` when that is mounted inside and not where `devcontainer exec` starts anyway. */
export function inDirectory(json: DevcontainerJson, cwd: string, command: string[]): string[] {
  if (cwd === json.workspaceFolder) return command;
  const mounted = mountedPaths(json).some((root) => cwd === root || cwd.startsWith(`${root}/`));
  return mounted ? ["/bin/sh", "-c", 'cd "$0" && exec "$@"', cwd, ...command] : command;
}

function main(): void {
  const { devcontainer, workspaceFolder, command } = parseShimArgs(process.argv.slice(2));
  const file = devcontainerJsonPath(workspaceFolder);
  const json = JSON.parse(readFileSync(file, "utf8")) as DevcontainerJson;
  const names = forwardedNames(process.env);
  json.remoteEnv = Object.fromEntries(names.map((name) => [name, localEnvRef(name)]));
  writeDevcontainerJson(workspaceFolder, json);
  const [program, ...args] = inDirectory(json, process.cwd(), command);
  const child = spawn(devcontainer, execArgs(workspaceFolder, program!, args), {
    stdio: "inherit",
    env: process.env,
  });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("error", (err) => {
    process.stderr.write(`brain devcontainer exec: could not start ${devcontainer}: ${err.message}\n`);
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
