// An agent definition's docker_args may set a container's variable as `-e NAME=VALUE` (docker's own README way):
// in `docker run`'s argv the value is in every local user's process listing (/proc/PID/cmdline, `ps`). Brain
// already gives the container its variables in a 0600 env file (env-file.ts), which docker reads the same way, so
// it moves such values there rather than refuse a config that works.
import { MAX_ENV_LINE_BYTES } from "../env-file.js";

/** docker_args without their `-e NAME=VALUE`s, and the variables those set, the last of a name winning. */
export function envFromDockerArgs(args: readonly string[]): { args: string[]; env: Record<string, string> } {
  const kept: string[] = [];
  const env: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    let spec: string | undefined;
    let taken = 1;
    if ((arg === "-e" || arg === "--env") && i + 1 < args.length) {
      spec = args[i + 1]!;
      taken = 2;
    } else if (arg.startsWith("--env=")) spec = arg.slice("--env=".length);
    else if (arg.startsWith("-e") && arg.length > 2 && !arg.startsWith("--")) spec = arg.slice(2);
    const eq = spec?.indexOf("=") ?? -1;
    // `-e NAME` (the value from docker's own environment) holds no value; a value the env file cannot carry
    // (a line break, NUL) or a name it cannot say stays in argv as written, as it worked before.
    if (spec === undefined || eq < 1 || !movable(spec.slice(0, eq), spec.slice(eq + 1))) {
      kept.push(arg);
      continue;
    }
    env[spec.slice(0, eq)] = spec.slice(eq + 1);
    i += taken - 1;
  }
  return { args: kept, env };
}

/** What docker's env-file parser reads back as written (envFileText refuses the rest). */
const movable = (name: string, value: string) =>
  !/[\s\0]/.test(name) &&
  !name.startsWith("#") &&
  !/[\n\r\0]/.test(value) &&
  Buffer.byteLength(`${name}=${value}`) <= MAX_ENV_LINE_BYTES;
