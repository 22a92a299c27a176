// An agent definition's docker_args may set a container's variable as `-e NAME=VALUE` (docker's own README way)
// or any other form docker reads (core/docker-env-args.ts): in `docker run`'s argv the value is in every local
// user's process listing (/proc/PID/cmdline, `ps`). Brain already gives the container its variables in a 0600 env
// file (env-file.ts), which docker reads the same way, so it moves such values there rather than refuse a config
// that works.
import { dockerEnvArgs } from "../../core/docker-env-args.js";
import { MAX_ENV_LINE_BYTES } from "../env-file.js";

/** docker_args without their `-e NAME=VALUE`s, and the variables those set, the last of a name winning. */
export function envFromDockerArgs(args: readonly string[]): { args: string[]; env: Record<string, string> } {
  const moved = new Map<number, { name: string; value: string; taken: number }>();
  // A value the env file cannot carry (a line break, NUL) or a name it cannot say stays in argv as written, as it
  // worked before.
  for (const found of dockerEnvArgs(args))
    if (movable(found.name, found.value)) moved.set(found.index, found);
  const kept: string[] = [];
  const env: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const found = moved.get(i);
    if (!found) {
      kept.push(args[i]!);
      continue;
    }
    env[found.name] = found.value;
    i += found.taken - 1;
  }
  return { args: kept, env };
}

/** What docker's env-file parser reads back as written (envFileText refuses the rest). */
const movable = (name: string, value: string) =>
  !/[\s\0]/.test(name) &&
  !name.startsWith("#") &&
  !/[\n\r\0]/.test(value) &&
  Buffer.byteLength(`${name}=${value}`) <= MAX_ENV_LINE_BYTES;
