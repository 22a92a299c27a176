// What a session's container may take of this host: memory (swap included), processes, CPUs. Every container
// Brain starts (the docker harness, sandbox: docker, devcontainer) carries them; without them one session's fork
// bomb or memory leak takes the host from every other tenant. The operator sets them (brain.config.json
// `containers`); the flags go last among the run's options, so what an agent definition's docker_args say cannot
// lift them (Docker takes the last of a repeated flag), and a dev container's image cannot add run arguments.
import { availableParallelism } from "node:os";
import type { ContainerLimits } from "../../protocol/config.js";

export const DEFAULT_CONTAINER_LIMITS = { memory: "4g", pids: 4096, cpus: 2 } as const;

/** The limits with defaults filled in; the default CPUs are at most this host's (Docker refuses more). */
export function containerLimits(config: ContainerLimits | undefined): Required<ContainerLimits> {
  return {
    memory: config?.memory ?? DEFAULT_CONTAINER_LIMITS.memory,
    pids: config?.pids ?? DEFAULT_CONTAINER_LIMITS.pids,
    cpus: config?.cpus ?? Math.min(DEFAULT_CONTAINER_LIMITS.cpus, availableParallelism()),
  };
}

/** As `docker run` arguments. `--memory-swap` as much as `--memory`: no swap beyond the bound. */
export function limitArgs(limits: Required<ContainerLimits>): string[] {
  return [
    "--memory",
    limits.memory,
    "--memory-swap",
    limits.memory,
    "--pids-limit",
    String(limits.pids),
    "--cpus",
    String(limits.cpus),
  ];
}
