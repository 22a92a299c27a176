// docker: what a container costs. (1) A new `docker` session on a real engine (the TypeScript agent image, network
// none): docker run → netns bridge → GET /info → first delta, against a plain `docker run` of the same image
// answering its first event (the container's address on Docker's bridge, no Brain). (2) A warm pi-cli turn
// (shell tool call, then text) with sandbox: docker, and (3) the same turn through pi's agent-server image
// behind the `docker` harness, each against the same turn with pi on the host. The engine, base image and agent
// images come from scripts/docker-engine.sh and scripts/agent-images.sh, as in the tests.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { AGENT_PORT, PROVIDER_ENV } from "../src/agent-server/agent-server.js";
import { Brain } from "../src/core/brain.js";
import { HarnessRegistry } from "../src/core/registry.js";
import type { Session } from "../src/core/session.js";
import { HttpAgentClient } from "../src/harnesses/http/client.js";
import { DockerFactory } from "../src/harnesses/http/docker.js";
import { installDir } from "../src/harnesses/nui/install-paths.js";
import { PiCliFactory } from "../src/harnesses/pi-cli/factory.js";
import { installMounts } from "../src/harnesses/sandbox/docker-sandbox.js";
import { FsSessionStore } from "../src/store/fs/index.js";
import { docker as dockerSync, ensureDockerEngine, imageWithCommand } from "../src/testing/docker-engine.js";
import { dockerSandboxed } from "../src/testing/docker-sandbox.js";
import { shellAgent, startFakeProvider } from "../src/testing/fake-provider/index.js";
import { BuiltinTools } from "../src/tools/builtin.js";
import { ToolRouter } from "../src/tools/router.js";
import { completeTurn, firstDelta } from "./lib/brain.js";
import { makeTemp, removeTemp } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";

const root = installDir();
const run = promisify(execFile);

/**
 * The baseline of a new session: what Docker itself takes to start the same image and have it answer. `docker
 * run` on Docker's bridge (TS_AGENT_HOST=0.0.0.0 makes the agent listen there), GET /info polled every 20 ms at
 * the container's address, then POST /run until its first text event. The container is removed after the timing.
 */
async function plainFirstEvent(image: string, mounts: string[]): Promise<Sample> {
  let id = "";
  try {
    const { seconds, foreign } = await timed(async () => {
      id = (
        await run("docker", ["run", "-d", "-e", "TS_AGENT_HOST=0.0.0.0", ...mounts, image])
      ).stdout.trim();
      const address = await run("docker", ["inspect", "-f", "{{.NetworkSettings.IPAddress}}", id]);
      const client = new HttpAgentClient(`http://${address.stdout.trim()}:8090`, "plain docker run");
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          await client.info(1_000);
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      const stop = new AbortController();
      await new Promise<void>((resolve, reject) => {
        client
          .run({ message: "hello", runId: randomUUID() }, stop.signal, (decoded) => {
            if (decoded.ok && decoded.event.type === "text") {
              resolve();
              stop.abort();
            }
          })
          .then(() => reject(new Error("docker bench: the plain run ended with no text")), reject);
      });
    });
    return { value: seconds * 1000, foreign };
  } finally {
    if (id) await run("docker", ["rm", "-f", id]).catch(() => {});
  }
}

export async function dockerBench(opts: BenchOptions): Promise<BenchRow[]> {
  const base = await ensureDockerEngine();
  const image = imageWithCommand(base, "brain-test/ts-agent", [
    "node",
    join(root, "dist/src/testing/fixtures/nui/ts-agent.js"),
    "http",
    "8090",
  ]);
  const agentImage = (await run("bash", [join(root, "scripts/agent-images.sh"), "pi-cli"])).stdout.trim();
  const fake = await startFakeProvider();
  fake.setFallback(shellAgent({ slowDelayMs: 0 }));
  const fakePort = Number(new URL(fake.url).port);
  const home = await makeTemp("docker-bench");
  const brain = new Brain({
    store: new FsSessionStore(home),
    harnesses: new HarnessRegistry([
      new DockerFactory("docker"),
      new PiCliFactory({}),
      dockerSandboxed((o) => new PiCliFactory(o), "pi-cli-docker")({}),
    ]),
    tools: new ToolRouter([new BuiltinTools()]),
    credentials: () => ({ base_url: `${fake.url}/v1`, api_key: "sk-bench" }),
  });
  const mounts = installMounts(root).flatMap((dir) => ["-v", `${dir}:${dir}:ro`]);
  const docker = { options: { image, containerPort: 8090, network: "none", docker_args: mounts } };
  log(
    `docker: new docker session vs plain docker run; pi-cli sandboxed and served vs on the host; ${opts.reps} rounds`,
  );
  try {
    const start = await interleave("docker first event", opts.reps, {
      plain: () => plainFirstEvent(image, mounts),
      brain: async (): Promise<Sample> => {
        let session: Session | undefined;
        const { seconds, foreign } = await timed(async () => {
          session = await brain.create({ harness: "docker", config: docker });
          await firstDelta(session, "hello", "docker bench");
        });
        await session?.close();
        return { value: seconds * 1000, foreign };
      },
    });
    const model = { model: "fake-model" };
    const host = await brain.create({ harness: "pi-cli", config: model });
    const boxed = await brain.create({ harness: "pi-cli-docker", config: model });
    const served = await brain.create({
      harness: "docker",
      config: {
        ...model,
        options: {
          image: agentImage,
          containerPort: AGENT_PORT,
          network: "none",
          host_ports: [fakePort],
          env: { [PROVIDER_ENV.base_url]: `${fake.url}/v1`, [PROVIDER_ENV.api_key]: "sk-bench" },
        },
      },
    });
    for (const s of [host, boxed, served]) await completeTurn(s, "List the files here", "docker bench");
    const turnOf = (session: Session) => async (): Promise<Sample> => {
      const { seconds, foreign } = await timed(() =>
        completeTurn(session, "List the files here", "docker bench"),
      );
      return { value: seconds * 1000, foreign };
    };
    const turn = await interleave("pi-cli turn", opts.reps, {
      host: turnOf(host),
      sandboxed: turnOf(boxed),
      served: turnOf(served),
    });
    const size = dockerSync("image", "inspect", "-f", "{{.Size}}", agentImage);
    return [
      timeRow(
        {
          id: "docker-first-event",
          what: "docker harness: new session's first delta (docker run → netns bridge → /info → /run)",
          unit: "ms",
          baselineWhat:
            "plain docker run of the same image until its first /run event (bridge network, no Brain)",
          notes: ["the TypeScript agent image on the base image; Brain's side runs it with --network none"],
        },
        { subject: start.brain, baseline: start.plain },
        { kind: "max-ratio", ratio: 1.5 },
      ),
      timeRow(
        {
          id: "sandbox-warm-turn",
          what: "pi-cli warm turn (shell tool call, then text) with sandbox: docker",
          unit: "ms",
          baselineWhat: "the same turn with pi on the host",
          notes: ["pi's RPC stdio crosses docker exec; its tool runs in the --network none container"],
        },
        { subject: turn.sandboxed, baseline: turn.host },
        { kind: "max-ratio", ratio: 2 },
      ),
      timeRow(
        {
          id: "agent-image-warm-turn",
          what: "pi-cli warm turn (shell tool call, then text) in its agent-server image behind docker",
          unit: "ms",
          baselineWhat: "the same turn with pi on the host",
          notes: [
            `${agentImage} (${Math.round(Number(size) / 2 ** 20)} MiB), --network none; /run over the netns bridge`,
          ],
        },
        { subject: turn.served, baseline: turn.host },
        { kind: "max-ratio", ratio: 2 },
      ),
    ];
  } finally {
    await brain.close();
    await fake.close();
    await removeTemp(home);
  }
}
