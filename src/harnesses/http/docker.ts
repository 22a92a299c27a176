// `docker`: an HTTP/SSE agent in a container Brain starts for the session. `docker run -d` with labels naming
// the session (so a session reopened after a host crash first removes what it left), then the agent's port:
// published on 127.0.0.1 (`docker port`), or with network "none" bridged through the container's network
// namespace (container-net.ts). A published port answers every process on this host and every container on Docker's
// network, so the container gets a token of its own (BRAIN_AGENT_TOKEN), sent with every request as a bearer token:
// Brain's agent server serves only requests that carry it (nui's agents ignore both). GET /info until it answers (every 20 ms at first, then 200 ms, up to a timeout,
// failing with the container's log when it exits). The sweep of leftovers runs alongside `docker run`, each step
// after it as soon as what it needs is known: a session's start costs little beyond Docker's own. On close POST
// /shutdown, `docker stop`, `docker rm`. A container that dies mid-run fails the turn with brain_error and the
// end of its log.
//
// The session's native dir is mounted at /brain/native (BRAIN_NATIVE_DIR): an agent that keeps its conversation
// there and says so in /info (Brain's CLI agent server) has it checkpointed, restored and forked with the session
// (agent-state.ts); the same path in every container, so a fork's files mean what they meant. A `network: "none"`
// container gets a NUI_API_URL of its session's own (container-hitl.ts): its permissions and questions reach
// Brain's clients. These values go to the container in an env file (env-file.ts), never in argv or an image.
import { randomBytes } from "node:crypto";
import { isAbsolute } from "node:path";
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { HarnessError } from "../../core/harness.js";
import type { ContainerLimits } from "../../protocol/config.js";
import { writeEnvFile } from "../env-file.js";
import { agentSideIn } from "../nui/resume-state.js";
import { nuiSessionOptions } from "../nui/session-options.js";
import { AgentState } from "./agent-state.js";
import { HttpAgentClient } from "./client.js";
import { dockerOptions } from "./connect-options.js";
import { Container, HOME_LABEL, SESSION_LABEL, sweepSession } from "./container.js";
import { ContainerHitl } from "./container-hitl.js";
import { containerLimits, limitArgs } from "./container-limits.js";
import { ContainerNet } from "./container-net.js";
import { type ContainerRecords, type PendingRun, RUN_LABEL } from "./container-records.js";
import { envFromDockerArgs } from "./docker-args-env.js";
import {
  closedWhileOpening,
  closedWhileStarting,
  DockerCli,
  DockerStopped,
  parseDockerPort,
} from "./docker-cli.js";
import { HttpHarness, type HttpTimeouts } from "./http-harness.js";

export interface DockerTimeouts extends HttpTimeouts {
  /** `docker run` (may pull the image). */
  runMs: number;
  /** From `docker run` until GET /info answers. */
  healthMs: number;
  /** Each of `docker stop` and `docker rm`. */
  stopMs: number;
}

export const DEFAULT_DOCKER_TIMEOUTS: DockerTimeouts = {
  runMs: 300_000,
  healthMs: 30_000,
  stopMs: 30_000,
  interruptGraceMs: 5_000,
  shutdownMs: 3_000,
};

/** Where every container finds its session's native dir, and the variable that says so. */
export const NATIVE_MOUNT = "/brain/native";
export const NATIVE_DIR_ENV = "BRAIN_NATIVE_DIR";
/** The container's own bearer token, which Brain's agent server requires of every request (agent-server-main.ts). */
export const AGENT_TOKEN_ENV = "BRAIN_AGENT_TOKEN";

/**
 * GET /info's retry: often while the agent is likely starting (a refused connection through the bridge costs
 * little, and a start is not held up by a wait), then less often.
 */
const HEALTH_POLL_MS = { fast: 20, fastFor: 3_000, slow: 200 };
/** This often while it does not answer, ask Docker whether the container is still running. */
const STATE_EVERY_MS = 1_000;

export interface DockerRunSpec {
  image: string;
  containerPort: number;
  /** The file of the container's variables (writeEnvFile). */
  envFile: string;
  extra?: string[];
  network?: "published" | "none";
  labels?: Record<string, string>;
  /** What the container may take of this host (limitArgs): after `extra`, which cannot lift them. */
  limits?: string[];
}

/**
 * The exact `docker run` arguments for a session's container. Every variable is in the env file, so no value (a
 * key, a token) shows in a process listing, PATH and HOME included. No `--rm`: the log of a container that died
 * must outlive it, for the error; close removes it.
 */
export function dockerRunArgs(spec: DockerRunSpec): string[] {
  const labels = Object.entries(spec.labels ?? {}).flatMap(([k, v]) => ["--label", `${k}=${v}`]);
  const network =
    spec.network === "none" ? ["--network", "none"] : ["-p", `127.0.0.1::${spec.containerPort}`];
  const envArgs = ["--env-file", spec.envFile];
  const limits = spec.limits ?? [];
  return ["run", "-d", ...labels, ...network, ...envArgs, ...(spec.extra ?? []), ...limits, spec.image];
}

/** `--mount` for the native dir; a path `--mount` cannot carry is refused rather than misread. */
export function nativeMount(dir: string, harness: string): string[] {
  if (!isAbsolute(dir) || /[,\n\r"]/.test(dir)) {
    throw new HarnessError(
      "brain_error",
      `harness "${harness}": the session's native dir ${JSON.stringify(dir)} cannot be mounted into its container (it must be an absolute path without commas, quotes or line breaks); give Brain a home under such a path (BRAIN_HOME)`,
    );
  }
  return ["--mount", `type=bind,source=${dir},target=${NATIVE_MOUNT}`];
}

export class DockerFactory implements HarnessFactory {
  readonly supportsSteering = false;
  private readonly timeouts: DockerTimeouts;

  constructor(
    readonly name = "docker",
    private readonly docker = new DockerCli(),
    timeouts: Partial<DockerTimeouts> = {},
    /** Where each session's container is recorded while it runs (the next Brain removes it if this one dies). */
    private readonly records?: ContainerRecords,
    /** The operator's bounds on each container (brain.config.json `containers`); default DEFAULT_CONTAINER_LIMITS. */
    private readonly limits?: ContainerLimits,
  ) {
    this.timeouts = { ...DEFAULT_DOCKER_TIMEOUTS, ...timeouts };
  }

  /** Known once the agent has run: its resume file says whether it keeps its state in the native dir. */
  async agentSide(_config: HarnessOptions["config"], nativeDir?: string): Promise<string | undefined> {
    return nativeDir === undefined ? undefined : agentSideIn(nativeDir);
  }

  async open(options: HarnessOptions): Promise<Harness> {
    const { image, containerPort, docker_args, network, host_ports } = dockerOptions(
      options.config.options,
      this.name,
    );
    const session = nuiSessionOptions(options.config.options, this.name);
    const mount = nativeMount(options.dir, this.name);
    this.docker.assertInstalled(this.name);
    // The sweep of a crashed host's leftovers runs alongside `docker run`, sparing the container it starts.
    let started: (id: string | undefined) => void = () => {};
    const owner = { id: options.sessionId, ...(this.records ? { home: this.records.home } : {}) };
    const sweep = sweepSession(
      this.docker,
      owner,
      this.timeouts.stopMs,
      new Promise((resolve) => {
        started = resolve;
      }),
      options.signal,
    );
    sweep.catch(() => {}); // settled below, on every path
    let harness: HttpHarness | undefined;
    let hitl: ContainerHitl | undefined;
    const token = randomBytes(32).toString("hex");
    let container = "";
    let running = false;
    let pending: PendingRun | undefined;
    try {
      hitl =
        network === "none"
          ? await ContainerHitl.open(options, (runId) => harness?.runFor(runId), [
              containerPort,
              ...host_ports,
            ])
          : undefined;
      // The agent may quote either in any event it sends, and the session's log must never hold them.
      options.secret?.({ name: AGENT_TOKEN_ENV, value: token });
      if (hitl) options.secret?.({ name: "NUI_API_URL token", value: hitl.token });
      // docker_args' `-e NAME=VALUE`s go in the file too, out of docker's argv; last, as `-e` beats --env-file.
      const given = envFromDockerArgs(docker_args ?? []);
      const env = {
        ...session.env,
        [NATIVE_DIR_ENV]: NATIVE_MOUNT,
        [AGENT_TOKEN_ENV]: token,
        ...(hitl ? { NUI_API_URL: hitl.url } : {}),
        ...given.env,
      };
      // Read by docker as it starts: gone once `docker run` has returned, whether or not it started anything.
      const envFile = writeEnvFile(env, this.name);
      running = true;
      pending = this.records?.starting(this.docker.program);
      const run = await this.docker
        .run(
          dockerRunArgs({
            image,
            containerPort,
            envFile: envFile.path,
            extra: [...mount, ...given.args],
            network,
            limits: limitArgs(containerLimits(this.limits)),
            labels: {
              [SESSION_LABEL]: options.sessionId,
              ...(owner.home ? { [HOME_LABEL]: owner.home } : {}),
              ...(pending ? { [RUN_LABEL]: pending.run } : {}),
              "brain.harness": this.name,
            },
          }),
          this.timeouts.runMs,
          options.signal,
        )
        .finally(envFile.remove);
      container = run.stdout.trim().split("\n").at(-1)?.trim() ?? "";
    } catch (err) {
      started(undefined);
      await sweep.catch(() => {});
      await hitl?.close();
      // A run that timed out (or failed) may have started the container all the same, after the sweep beside it
      // listed the session's: without a second look it would run on with no session to remove it. A create the
      // daemon still had in hand is listed by no look: the run's record stays, for the next start's sweep by label.
      if (running) await sweepSession(this.docker, owner, this.timeouts.stopMs).catch(() => {});
      throw err instanceof DockerStopped ? closedWhileStarting(this.name, image, err) : err;
    }
    started(container || undefined);
    const box = new Container(this.docker, container, image, this.timeouts.stopMs, this.records);
    pending?.settled();
    let net: ContainerNet | undefined;
    const reach = async () => {
      if (!container) throw new HarnessError("brain_error", `docker run ${image} printed no container id`);
      let client: HttpAgentClient;
      if (network === "none") {
        const served = hitl ? [{ port: hitl.port, socket: hitl.socket }] : [];
        net = await ContainerNet.open(
          await box.pid(options.signal),
          containerPort,
          host_ports,
          this.name,
          undefined,
          served,
        );
        // Through its socket file: a port on this host's loopback would answer every local user.
        const url = `http://127.0.0.1:${containerPort}`;
        const socket = net.agentSocket ? { socketPath: net.agentSocket } : {};
        client = new HttpAgentClient(url, `${this.name} agent ${image} at ${url} in its container`, {
          token,
          ...socket,
        });
      } else {
        const ported = await this.docker.run(
          ["port", container, String(containerPort)],
          10_000,
          options.signal,
        );
        const url = `http://127.0.0.1:${parseDockerPort(ported.stdout)}`;
        client = new HttpAgentClient(url, `${this.name} agent ${image} at ${url}`, { token });
      }
      try {
        return { client, capabilities: (await this.waitHealthy(client, box, options.signal)).capabilities };
      } catch (err) {
        await client.close();
        throw err;
      }
    };
    // Both settle before either's failure is handled: a bridge still starting when the sweep failed is closed too.
    const [swept, reached] = await Promise.allSettled([sweep, reach()]);
    if (swept.status === "rejected" || reached.status === "rejected") {
      await net?.close();
      await hitl?.close();
      if (container) await box.remove();
      // The close's stop of a step wins over another step's failure that the stop caused (a killed sweep).
      const errs = [reached, swept].flatMap((r) => (r.status === "rejected" ? [r.reason as Error] : []));
      const stopped = errs.find((e) => e instanceof DockerStopped);
      if (stopped) throw closedWhileOpening(this.name, stopped, "; the session's container was removed");
      const err = errs[0]!;
      throw err instanceof HarnessError ? err : new HarnessError("brain_error", err.message);
    }
    const { client, capabilities } = reached.value;
    harness = await HttpHarness.open({
      client,
      options,
      session,
      timeouts: this.timeouts,
      ...(hitl ? { desk: hitl.desk } : {}),
      ...(AgentState.offered(capabilities) ? { state: new AgentState(client) } : {}),
      explain: () => box.describe(),
      release: async () => {
        await client.shutdown(this.timeouts.shutdownMs);
        await net?.close();
        await hitl?.close();
        await box.remove((message) => options.emit({ type: "harness.warning", data: { message } }));
      },
    });
    return harness;
  }

  private async waitHealthy(
    client: HttpAgentClient,
    box: Container,
    signal?: AbortSignal,
  ): Promise<{ capabilities?: unknown }> {
    const start = Date.now();
    const deadline = start + this.timeouts.healthMs;
    let last = "";
    let checked = start;
    while (Date.now() < deadline) {
      try {
        return await client.info(Math.min(2_000, this.timeouts.healthMs));
      } catch (err) {
        last = (err as Error).message;
      }
      // Each GET /info is bounded by 2 s: the session's close stops the wait at the next.
      if (signal?.aborted) throw new DockerStopped("the wait was stopped", "", "GET /info of its agent");
      if (Date.now() - checked >= STATE_EVERY_MS) {
        checked = Date.now();
        const running = await box.running(signal);
        if (signal?.aborted) throw new DockerStopped("the wait was stopped", "", "docker inspect");
        if (!running) {
          throw new HarnessError(
            "brain_error",
            `container ${box.image} stopped before it answered GET /info: ${await box.describe()}`,
          );
        }
      }
      const { fast, fastFor, slow } = HEALTH_POLL_MS;
      await new Promise((resolve) => setTimeout(resolve, Date.now() - start < fastFor ? fast : slow));
    }
    throw new HarnessError(
      "brain_error",
      `container ${box.image} did not answer GET /info within ${this.timeouts.healthMs / 1000} s (last: ${last}); does it listen on its containerPort (on 0.0.0.0 when published)? ${await box.describe()}`,
    );
  }
}
