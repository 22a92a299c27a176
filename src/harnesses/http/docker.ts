// `docker`: an HTTP/SSE agent in a container Brain starts for the session. `docker run -d` with labels naming
// the session (so a session reopened after a host crash first removes what it left), then the agent's port:
// published on 127.0.0.1 (`docker port`), or with network "none" bridged through the container's network
// namespace (container-net.ts). GET /info until it answers (every 200 ms up to a timeout, failing at once with
// the container's log when it exits). On close POST /shutdown, `docker stop`, `docker rm`. A container that
// dies mid-run fails the turn with brain_error and the end of its log.
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { HarnessError } from "../../core/harness.js";
import { nuiSessionOptions } from "../nui/session-options.js";
import { HttpAgentClient } from "./client.js";
import { dockerOptions } from "./connect-options.js";
import { Container, SESSION_LABEL, sweepSession } from "./container.js";
import { ContainerNet } from "./container-net.js";
import { DockerCli, parseDockerPort } from "./docker-cli.js";
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

const HEALTH_POLL_MS = 200;
/** Every this many failed health polls, ask Docker whether the container is still running. */
const STATE_EVERY = 5;

export interface DockerRunSpec {
  image: string;
  containerPort: number;
  env: Record<string, string>;
  extra?: string[];
  network?: "published" | "none";
  labels?: Record<string, string>;
}

/**
 * The exact `docker run` arguments for a session's container. Variables are passed by name (`-e NAME`), their
 * values through docker's own environment, so no value (a key, a token) shows in a process listing. No `--rm`:
 * the log of a container that died must outlive it, for the error; close removes it.
 */
export function dockerRunArgs(spec: DockerRunSpec): string[] {
  const labels = Object.entries(spec.labels ?? {}).flatMap(([k, v]) => ["--label", `${k}=${v}`]);
  const network =
    spec.network === "none" ? ["--network", "none"] : ["-p", `127.0.0.1::${spec.containerPort}`];
  const envArgs = Object.keys(spec.env).flatMap((name) => ["-e", name]);
  return ["run", "-d", ...labels, ...network, ...envArgs, ...(spec.extra ?? []), spec.image];
}

export class DockerFactory implements HarnessFactory {
  readonly supportsSteering = false;
  private readonly timeouts: DockerTimeouts;

  constructor(
    readonly name = "docker",
    private readonly docker = new DockerCli(),
    timeouts: Partial<DockerTimeouts> = {},
  ) {
    this.timeouts = { ...DEFAULT_DOCKER_TIMEOUTS, ...timeouts };
  }

  async open(options: HarnessOptions): Promise<Harness> {
    const { image, containerPort, docker_args, network, host_ports } = dockerOptions(
      options.config.options,
      this.name,
    );
    const session = nuiSessionOptions(options.config.options, this.name);
    this.docker.assertInstalled(this.name);
    await sweepSession(this.docker, options.sessionId, this.timeouts.stopMs);
    const started = await this.docker.run(
      dockerRunArgs({
        image,
        containerPort,
        env: session.env,
        extra: docker_args,
        network,
        labels: { [SESSION_LABEL]: options.sessionId, "brain.harness": this.name },
      }),
      this.timeouts.runMs,
      session.env,
    );
    const container = started.stdout.trim().split("\n").at(-1)?.trim() ?? "";
    if (!container) throw new HarnessError("brain_error", `docker run ${image} printed no container id`);
    const box = new Container(this.docker, container, image, this.timeouts.stopMs);
    let net: ContainerNet | undefined;
    let client: HttpAgentClient;
    try {
      let url: string;
      if (network === "none") {
        net = await ContainerNet.open(await box.pid(), containerPort, host_ports, this.name);
        url = net.url;
      } else {
        const ported = await this.docker.run(["port", container, String(containerPort)], 10_000);
        url = `http://127.0.0.1:${parseDockerPort(ported.stdout)}`;
      }
      client = new HttpAgentClient(url, `${this.name} agent ${image} at ${url}`);
      await this.waitHealthy(client, box);
    } catch (err) {
      await net?.close();
      await box.remove();
      throw err instanceof HarnessError ? err : new HarnessError("brain_error", (err as Error).message);
    }
    return HttpHarness.open({
      client,
      options,
      session,
      timeouts: this.timeouts,
      explain: () => box.describe(),
      release: async () => {
        await client.shutdown(this.timeouts.shutdownMs);
        await net?.close();
        await box.remove();
      },
    });
  }

  private async waitHealthy(client: HttpAgentClient, box: Container): Promise<void> {
    const deadline = Date.now() + this.timeouts.healthMs;
    let last = "";
    for (let attempt = 1; Date.now() < deadline; attempt++) {
      try {
        await client.info(Math.min(2_000, this.timeouts.healthMs));
        return;
      } catch (err) {
        last = (err as Error).message;
      }
      if (attempt % STATE_EVERY === 0 && !(await box.running())) {
        throw new HarnessError(
          "brain_error",
          `container ${box.image} stopped before it answered GET /info: ${await box.describe()}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, HEALTH_POLL_MS));
    }
    throw new HarnessError(
      "brain_error",
      `container ${box.image} did not answer GET /info within ${this.timeouts.healthMs / 1000} s (last: ${last}); does it listen on its containerPort (on 0.0.0.0 when published)? ${await box.describe()}`,
    );
  }
}
