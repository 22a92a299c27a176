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
import { forwardedNames, isMain, relay, shimArgs } from "../exec-relay.js";
import { execArgs } from "./cli.js";
import { type DevcontainerJson, localEnvRef, readDevcontainerJson, writeDevcontainerJson } from "./config.js";

export function parseShimArgs(argv: string[]): {
  devcontainer: string;
  workspaceFolder: string;
  command: string[];
} {
  const { flag, command } = shimArgs(argv);
  const devcontainer = flag("--devcontainer") ?? "devcontainer";
  const workspaceFolder = flag("--workspace-folder");
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

async function main(): Promise<void> {
  const { devcontainer, workspaceFolder, command } = parseShimArgs(process.argv.slice(2));
  const json = await readDevcontainerJson(workspaceFolder);
  const names = forwardedNames(process.env);
  json.remoteEnv = Object.fromEntries(names.map((name) => [name, localEnvRef(name)]));
  await writeDevcontainerJson(workspaceFolder, json);
  const [program, ...args] = inDirectory(json, process.cwd(), command);
  relay(devcontainer, execArgs(workspaceFolder, program!, args), "brain devcontainer exec");
}

if (isMain(import.meta.url)) {
  await main().catch((err: Error) => {
    process.stderr.write(`brain devcontainer exec: ${err.message}\n`);
    process.exit(1);
  });
}
