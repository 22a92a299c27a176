// One session's container, by id: its init's pid (for its network namespace), whether it runs, how it ended
// with the end of its log (for the error that says why an agent went away), and its removal. And the sweep of
// what an earlier, crashed host left of a session: every container carries the session's label.
import { HarnessError } from "../../core/harness.js";
import { containerInit } from "./container-pid.js";
import type { ContainerRecords } from "./container-records.js";
import type { DockerCli } from "./docker-cli.js";

/** The label every container of a Brain session carries: its session id. */
export const SESSION_LABEL = "brain.session";
/**
 * And the home of the Brain that runs it: two Brains on one Docker engine may each have a session of the same id
 * (a caller may choose it), and neither may sweep the other's container as its own leftover.
 */
export const HOME_LABEL = "brain.home";

/** Whose containers: a session of the Brain on `home` (absent: of any Brain, as before homes were labelled). */
export interface SessionOwner {
  id: string;
  home?: string;
}

/** The labels of a session's containers, as `docker run` arguments. */
export function sessionLabels(session: SessionOwner): string[] {
  const labels = [
    `${SESSION_LABEL}=${session.id}`,
    ...(session.home ? [`${HOME_LABEL}=${session.home}`] : []),
  ];
  return labels.flatMap((label) => ["--label", label]);
}

const LOG_TAIL_LINES = 20;

// Every removal takes the container's anonymous volumes with it (`-v`): an image's VOLUME gives each container
// one, which `docker rm` alone leaves behind for good, one more per session. Named volumes are never touched.
/** `docker stop`'s grace: the agent was asked to stop already, and an agent that is PID 1 ignores SIGTERM. */
const STOP_GRACE_S = 2;

/**
 * Removes the containers an earlier run of this session left behind (a host that crashed before close). It runs
 * alongside the `docker run` of the session's new container, which carries the same label and may be listed:
 * `spare` resolves to that container's id (undefined when none started), which is never removed.
 */
export async function sweepSession(
  docker: DockerCli,
  session: SessionOwner,
  timeoutMs: number,
  spare: Promise<string | undefined> = Promise.resolve(undefined),
  /** The session's close while it opens: it stops the sweep (a later sweep, the next start's, finishes it). */
  signal?: AbortSignal,
): Promise<void> {
  const filters = sessionLabels(session).flatMap((arg) =>
    arg === "--label" ? ["--filter"] : [`label=${arg}`],
  );
  const listed = await docker.run(["ps", "-aq", ...filters], timeoutMs, signal);
  const keep = await spare;
  // `ps -q` prints short ids, `run -d` the full one: the same container when one begins the other.
  const stale = listed.stdout
    .split("\n")
    .map((l) => l.trim())
    .filter((id) => id && !(keep && (keep.startsWith(id) || id.startsWith(keep))));
  if (stale.length) await docker.run(["rm", "-f", "-v", ...stale], timeoutMs, signal);
}

/** `docker rm -f` of a container that is not there: as good as removed (newer CLIs say nothing and exit 0). */
export function goneAlready(err: Error): boolean {
  return /no such container/i.test(err.message);
}

/** One session's container, by id. */
export class Container {
  constructor(
    private readonly docker: DockerCli,
    readonly id: string,
    readonly image: string,
    /** Each of `docker stop` and `docker rm`. */
    private readonly stopMs: number,
    /** Where the container is recorded while it runs (a Brain that dies leaves it to the next one's start). */
    private readonly records?: ContainerRecords,
  ) {
    records?.add(docker.program, id);
  }

  /** From /proc when it shows the container (no docker command on a new session's path), else from Docker. */
  /** `signal`: the session's close while it opens, which stops the inspect. */
  async pid(signal?: AbortSignal): Promise<number> {
    const found = await containerInit(this.id);
    if (found) return found;
    const out = await this.docker.run(["inspect", "-f", "{{.State.Pid}}", this.id], 10_000, signal);
    const pid = Number(out.stdout.trim());
    if (!Number.isInteger(pid) || pid <= 0) {
      throw new HarnessError(
        "brain_error",
        `container ${this.image} is not running: ${await this.describe()}`,
      );
    }
    return pid;
  }

  async running(signal?: AbortSignal): Promise<boolean> {
    const out = await this.docker
      .run(["inspect", "-f", "{{.State.Running}}", this.id], 10_000, signal)
      .catch(() => ({ stdout: "false" }));
    return out.stdout.trim() === "true";
  }

  /** How the container is, and the end of its log: for an error that says why the agent went away. */
  async describe(): Promise<string> {
    // A container killed mid-run closes the stream a moment before Docker records the exit: give it that moment.
    let state = "";
    for (let i = 0; i < 10; i++) {
      state = await this.docker
        .run(["inspect", "-f", "{{.State.Status}} {{.State.ExitCode}} {{.State.OOMKilled}}", this.id], 10_000)
        .then((r) => r.stdout.trim())
        .catch((err: Error) => `unknown (${err.message})`);
      if (!state.startsWith("running")) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const [status, code, oom] = state.split(" ");
    const how =
      status === "exited"
        ? `container ${this.short} exited with code ${code}${oom === "true" ? " (out of memory)" : ""}`
        : `container ${this.short} is ${state}`;
    const logs = await this.docker
      .run(["logs", "--tail", String(LOG_TAIL_LINES), this.id], 10_000)
      .then((r) => `${r.stdout}${r.stderr}`.trim())
      .catch(() => "");
    return logs ? `${how}; its log ends:\n${logs}` : `${how}; its log is empty`;
  }

  /**
   * Stops and removes the container, each step within stopMs. An engine that did not answer (stopped, hung) may
   * still hold it: its record stays, for the next start, and `warn` (the session's log, at its close) is told why,
   * so the close ends in bounded time with the reason said rather than hanging on the engine or saying nothing.
   */
  async remove(warn?: (message: string) => void): Promise<void> {
    await this.docker.run(["stop", "-t", String(STOP_GRACE_S), this.id], this.stopMs).catch(() => {});
    const failed = await this.docker.run(["rm", "-f", "-v", this.id], this.stopMs).then(
      () => undefined,
      (err: Error) => (goneAlready(err) ? undefined : err.message),
    );
    if (failed === undefined) this.records?.remove(this.id);
    else
      warn?.(
        `container ${this.short} (${this.image}) could not be removed: ${failed}; ${this.records ? "it stays recorded, and Brain's next start removes it" : `remove it with docker rm -f ${this.id}`}`,
      );
  }

  private get short(): string {
    return this.id.slice(0, 12);
  }
}
