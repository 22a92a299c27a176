// The ways `docker run`'s argv sets a container variable, as docker's flag parser (pflag) reads them: `-e SPEC`,
// `--env SPEC`, `--env=SPEC`, `-e=SPEC` and `-eSPEC`, SPEC being NAME=VALUE. An agent definition's docker_args
// written any of these ways holds the value in plain text: the docker harness moves it out of argv, and a session's
// log and view keep it out (credentials.ts).

export interface DockerEnvArg {
  /** Where the assignment starts in the args, and how many args it takes (2 for `-e SPEC`). */
  index: number;
  taken: 1 | 2;
  name: string;
  value: string;
}

/** Every NAME=VALUE the args set; `-e NAME` alone (the value from docker's own environment) sets none. */
export function dockerEnvArgs(args: readonly unknown[]): DockerEnvArg[] {
  const out: DockerEnvArg[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (typeof arg !== "string") continue;
    let spec: unknown;
    let taken: 1 | 2 = 1;
    if ((arg === "-e" || arg === "--env") && i + 1 < args.length) {
      spec = args[i + 1];
      taken = 2;
    } else if (arg.startsWith("--env=")) spec = arg.slice("--env=".length);
    else if (arg.startsWith("-e=")) spec = arg.slice("-e=".length);
    else if (arg.startsWith("-e") && arg.length > 2 && !arg.startsWith("--")) spec = arg.slice(2);
    if (typeof spec !== "string") continue;
    const eq = spec.indexOf("=");
    if (eq < 1) continue;
    out.push({ index: i, taken, name: spec.slice(0, eq), value: spec.slice(eq + 1) });
    i += taken - 1;
  }
  return out;
}
