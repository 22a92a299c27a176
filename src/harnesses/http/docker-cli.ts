// The docker commands the `docker` harness runs, each with a timeout and an error that says what to do:
// no docker CLI, no reachable daemon, no such image.
import { execFile } from "node:child_process";
import { HarnessError } from "../../core/harness.js";
import { findMissing } from "../process/command.js";

export interface DockerResult {
  stdout: string;
  stderr: string;
}

/**
 * What the docker CLI needs from Brain's environment, and nothing else: `-e NAME` in a session's `docker_args`
 * takes NAME's value from docker's environment, so a fuller one would hand the host's secrets to any image.
 */
export function dockerEnvironment(from: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(from)) {
    if (value !== undefined && readByDocker(name)) out[name] = value;
  }
  return out;
}

/** A variable the docker CLI itself reads (where it finds its program, config, daemon, temporary files). */
export function readByDocker(name: string): boolean {
  return (
    ["PATH", "HOME", "XDG_RUNTIME_DIR", "TMPDIR", "SystemRoot"].includes(name) || name.startsWith("DOCKER_")
  );
}

export class DockerCli {
  constructor(
    /** The docker program: a name on PATH or a path. */
    readonly program = "docker",
    /** What the CLI runs with (an exec shim's docker is given where this one finds its daemon). */
    readonly env: NodeJS.ProcessEnv = dockerEnvironment(process.env),
  ) {}

  /** A HarnessError when the CLI is missing: nothing else can work without it. */
  assertInstalled(harness: string): void {
    const missing = findMissing(this.program, [], process.cwd(), this.env.PATH ?? "");
    if (missing) {
      throw new HarnessError(
        "brain_error",
        `harness "${harness}" runs its agent with Docker, but ${missing.replace("runner program", "the docker CLI")} (install Docker, https://docs.docker.com/get-docker/)`,
      );
    }
  }

  /** docker's environment is only what it reads itself (dockerEnvironment): a container's variables go in a file. */
  run(args: string[], timeoutMs: number): Promise<DockerResult> {
    return new Promise((resolve, reject) => {
      const options = { env: this.env, timeout: timeoutMs, maxBuffer: 4 << 20 };
      execFile(this.program, args, options, (err, stdout, stderr) => {
        if (!err) return resolve({ stdout, stderr });
        const detail = usefulOutput(stderr) || stdout.trim();
        // Killed by the timeout: Docker's last words (if any) are not why it failed.
        if (err.killed && typeof err.code !== "string") {
          const waited = `${this.program} ${args[0]} timed out after ${timeoutMs / 1000}s`;
          return reject(new HarnessError("brain_error", detail ? `${waited} (it said: ${detail})` : waited));
        }
        reject(
          new HarnessError("brain_error", `${this.program} ${args[0]}: ${explain(detail || err.message)}`),
        );
      });
    });
  }
}

/**
 * Docker's stderr without its warnings ("WARNING: IPv4 forwarding is disabled", printed on every run of some
 * hosts), unless warnings are all it said.
 */
export function usefulOutput(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const errors = lines.filter((l) => !l.startsWith("WARNING:"));
  return (errors.length ? errors : lines).join("\n");
}

/** Docker's own words, with what to do about the common failures. */
export function explain(detail: string): string {
  const lower = detail.toLowerCase();
  if (lower.includes("cannot connect to the docker daemon") || lower.includes("docker.sock")) {
    return `Docker is not running or not reachable (${detail}); start the Docker daemon and try again`;
  }
  if (
    lower.includes("unable to find image") ||
    lower.includes("pull access denied") ||
    lower.includes("manifest unknown")
  ) {
    return `${detail}; build the image first (docker build -t IMAGE .) or check its name`;
  }
  return detail;
}

/** `docker port` prints "0.0.0.0:32768" (and an IPv6 line): the host port of the last line. */
export function parseDockerPort(output: string): number {
  const lines = output
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const last = lines.at(-1) ?? "";
  const port = Number(last.slice(last.lastIndexOf(":") + 1));
  if (!Number.isInteger(port) || port <= 0)
    throw new Error(`unexpected docker port output: ${JSON.stringify(output)}`);
  return port;
}
