// `docker`: an HTTP/SSE agent in a container Brain starts for the session: `docker run -d --rm -p
// 127.0.0.1::<containerPort> <image>`, `docker port` for the host port, GET /info until it answers (retried
// every 200 ms up to a timeout), and on close POST /shutdown, then `docker stop`.
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { HarnessError } from "../../core/harness.js";
import { ResumeState } from "../nui/resume-state.js";
import { nuiSessionOptions } from "../nui/session-options.js";
import { HttpAgentClient } from "./client.js";
import { dockerOptions } from "./connect-options.js";
import { DockerCli, parseDockerPort } from "./docker-cli.js";
import { HttpHarness, type HttpTimeouts } from "./http-harness.js";

export interface DockerTimeouts extends HttpTimeouts {
  /** `docker run` (may pull the image). */
  runMs: number;
  /** From `docker run` until GET /info answers. */
  healthMs: number;
  /** `docker stop`. */
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

/**
 * The exact `docker run` arguments for a session's container. Variables are passed by name (`-e NAME`), their
 * values through docker's own environment, so no value (a key, a token) shows in a process listing.
 */
export function dockerRunArgs(
  image: string,
  containerPort: number,
  env: Record<string, string>,
  extra: string[] = [],
): string[] {
  const envArgs = Object.keys(env).flatMap((name) => ["-e", name]);
  return ["run", "-d", "--rm", "-p", `127.0.0.1::${containerPort}`, ...envArgs, ...extra, image];
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
    const { image, containerPort, docker_args } = dockerOptions(options.config.options, this.name);
    const session = nuiSessionOptions(options.config.options, this.name);
    this.docker.assertInstalled(this.name);
    const started = await this.docker.run(
      dockerRunArgs(image, containerPort, session.env, docker_args),
      this.timeouts.runMs,
      session.env,
    );
    const container = started.stdout.trim().split("\n").at(-1)?.trim() ?? "";
    if (!container) throw new HarnessError("brain_error", `docker run ${image} printed no container id`);
    const stop = () => this.docker.run(["stop", container], this.timeouts.stopMs).then(() => {});
    let client: HttpAgentClient;
    try {
      const ported = await this.docker.run(["port", container, String(containerPort)], 10_000);
      const url = `http://127.0.0.1:${parseDockerPort(ported.stdout)}`;
      client = new HttpAgentClient(url, `${this.name} agent ${image} at ${url}`);
      await this.waitHealthy(client, image);
    } catch (err) {
      await stop().catch(() => {});
      throw err instanceof HarnessError ? err : new HarnessError("brain_error", (err as Error).message);
    }
    return new HttpHarness({
      name: client.name,
      client,
      options,
      session,
      resume: await ResumeState.load(options.dir),
      timeouts: this.timeouts,
      release: async () => {
        await client.shutdown(this.timeouts.shutdownMs);
        await stop().catch(() => {});
      },
    });
  }

  private async waitHealthy(client: HttpAgentClient, image: string): Promise<void> {
    const deadline = Date.now() + this.timeouts.healthMs;
    let last = "";
    while (Date.now() < deadline) {
      try {
        await client.info(Math.min(2_000, this.timeouts.healthMs));
        return;
      } catch (err) {
        last = (err as Error).message;
      }
      await new Promise((resolve) => setTimeout(resolve, HEALTH_POLL_MS));
    }
    throw new HarnessError(
      "brain_error",
      `container ${image} did not answer GET /info within ${this.timeouts.healthMs / 1000} s (last: ${last}); does it listen on its containerPort on 0.0.0.0?`,
    );
  }
}
