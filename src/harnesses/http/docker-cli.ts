// The docker commands the `docker` harness runs, each with a timeout and an error that says what to do:
// no docker CLI, no reachable daemon, no such image.
import { spawn } from "node:child_process";
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

  /**
   * docker's environment is only what it reads itself (dockerEnvironment): a container's variables go in a file.
   * The command runs in a process group of its own (a pull may start a credential helper), killed whole on its
   * timeout or when `signal` aborts (a session closed while it pulled or started its container): killing the CLI
   * ends the daemon's side of a pull too, and the promise rejects with DockerStopped at once, not when the pull
   * would have ended.
   */
  run(args: string[], timeoutMs: number, signal?: AbortSignal): Promise<DockerResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.program, args, {
        env: this.env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const out = { stdout: "", stderr: "" };
      let ended: "timeout" | "aborted" | "overflow" | undefined;
      const killGroup = (why: typeof ended) => {
        ended ??= why;
        try {
          if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        } catch {
          // The group is gone already.
        }
      };
      const keep = (key: "stdout" | "stderr") => (chunk: Buffer) => {
        out[key] += chunk.toString("utf8");
        if (out[key].length > MAX_OUTPUT_CHARS) killGroup("overflow");
      };
      child.stdout.on("data", keep("stdout"));
      child.stderr.on("data", keep("stderr"));
      const timer = setTimeout(() => killGroup("timeout"), timeoutMs);
      const abort = () => killGroup("aborted");
      signal?.addEventListener("abort", abort, { once: true });
      if (signal?.aborted) abort();
      const settle = (err?: Error) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", abort);
        const { stdout, stderr } = out;
        const detail = usefulOutput(stderr) || stdout.trim();
        const command = `${this.program} ${args[0]}`;
        if (ended === "aborted") {
          const named = args[0] === "image" ? args.slice(0, 2) : args.slice(0, 1);
          return reject(new DockerStopped(`${command} was stopped`, stderr, ["docker", ...named].join(" ")));
        }
        // Killed by the timeout: Docker's last words (if any) are not why it failed.
        if (ended === "timeout") {
          const waited = `${command} timed out after ${timeoutMs / 1000}s`;
          return reject(new HarnessError("brain_error", detail ? `${waited} (it said: ${detail})` : waited));
        }
        if (ended === "overflow") {
          return reject(
            new HarnessError("brain_error", `${command} printed more than ${MAX_OUTPUT_CHARS} characters`),
          );
        }
        if (!err) return resolve({ stdout, stderr });
        reject(new HarnessError("brain_error", `${command}: ${explain(detail || err.message)}`));
      };
      child.on("error", (err) => settle(err));
      child.on("close", (code, killed) => {
        if (code === 0) settle();
        else settle(new Error(`exited with ${killed ?? `code ${code}`}`));
      });
    });
  }
}

/** Of what a docker command prints, this much is read; more is no answer Brain asks for. */
const MAX_OUTPUT_CHARS = 4 << 20;

/**
 * A docker command its caller's signal stopped (the session closed while it ran); `stderr`: what it had said by
 * then (`docker run` says "Unable to find image … locally" before it pulls), for the caller's error.
 */
export class DockerStopped extends HarnessError {
  constructor(
    message: string,
    readonly stderr: string,
    /** The step that was stopped, as the session's log names it: the command (`docker ps`), or what Brain awaited. */
    readonly step: string,
  ) {
    super("brain_error", message);
  }
}

/** What each step of an open is for, by the command that runs it, for the error of a close that stopped it. */
const OPEN_STEPS: Record<string, string> = {
  "docker info": "checking that the Docker engine answers",
  "docker image inspect": "looking at its image",
  "docker ps": "looking for containers an earlier run of the session left",
  "docker rm": "removing containers an earlier run of the session left",
  "docker port": "asking Docker for its container's port",
  "docker inspect": "asking Docker about its container",
  "docker exec": "preparing its container",
};

/**
 * The error of a session closed while its open ran a short step (the engine check, the image's inspect, the sweep
 * of its old containers, the container's port or pid, its agent's first answer): that step was stopped, not waited
 * for, and the session's log names it. `after`: what the open then undid (its container removed).
 */
export function closedWhileOpening(harness: string, stopped: DockerStopped, after = ""): HarnessError {
  const why = OPEN_STEPS[stopped.step];
  return new HarnessError(
    "brain_error",
    `harness "${harness}": the session was closed while it opened, ${why ? `${why} (${stopped.step})` : stopped.step}; that step was stopped${after}`,
  );
}

/** The error of a session closed while `docker pull` ran: the session's log says what the close cut short. */
export function closedWhilePulling(harness: string, image: string): HarnessError {
  return new HarnessError(
    "brain_error",
    `harness "${harness}": the session was closed while pulling ${image}; the pull was stopped`,
  );
}

/**
 * The error of a session closed while the `docker run` of its container ran: pulling the image (docker says so
 * before it pulls one this host lacks) or starting the container. The caller has removed what it made.
 */
export function closedWhileStarting(harness: string, image: string, stopped: DockerStopped): HarnessError {
  const pulling = /unable to find image/i.test(stopped.stderr);
  return new HarnessError(
    "brain_error",
    `harness "${harness}": the session was closed while ${pulling ? `pulling ${image}` : `starting its container from ${image}`}; docker run was stopped and the session's container removed`,
  );
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
