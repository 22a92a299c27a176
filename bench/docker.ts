// docker: what a container costs. (1) A new `docker` session on a real engine (the TypeScript agent image, network
// none): docker run → netns bridge → GET /info → first delta, against the same prompt's first delta on a warm
// session. (2) A warm pi-cli turn (shell tool call, then text) with sandbox: docker, against the same turn with
// pi on the host. The engine and base image come from scripts/docker-engine.sh, as in the tests.
import { join } from "node:path";
import { Brain } from "../src/core/brain.js";
import { HarnessRegistry } from "../src/core/registry.js";
import type { Session } from "../src/core/session.js";
import { DockerFactory } from "../src/harnesses/http/docker.js";
import { installDir } from "../src/harnesses/nui/install-paths.js";
import { PiCliFactory } from "../src/harnesses/pi-cli/factory.js";
import { FsSessionStore } from "../src/store/fs/index.js";
import { ensureDockerEngine, imageWithCommand } from "../src/testing/docker-engine.js";
import { dockerSandboxed } from "../src/testing/docker-sandbox.js";
import { shellAgent, startFakeProvider } from "../src/testing/fake-provider/index.js";
import { BuiltinTools } from "../src/tools/builtin.js";
import { ToolRouter } from "../src/tools/router.js";
import { makeTemp, removeTemp, withTimeout } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";

/** Prompts and resolves at the first assistant.delta the log delivers; the turn is then let settle. */
async function firstDelta(session: Session, text: string): Promise<void> {
  let seen: () => void = () => {};
  const delta = new Promise<void>((resolve) => {
    seen = resolve;
  });
  const unsubscribe = session.log.subscribe((batch) => {
    if (batch.some((e) => e.type === "assistant.delta")) seen();
  });
  try {
    const turn = await session.prompt(text);
    await withTimeout(delta, 60_000, "first delta");
    const outcome = await withTimeout(turn.settled, 60_000, "turn");
    if (outcome.status !== "completed") throw new Error(`docker bench: turn ${outcome.status}`);
  } finally {
    unsubscribe();
  }
}

async function settle(session: Session, text: string): Promise<void> {
  const turn = await session.prompt(text);
  const outcome = await withTimeout(turn.settled, 120_000, "turn");
  if (outcome.status !== "completed") throw new Error(`docker bench: turn ${outcome.status}`);
}

const root = installDir();

export async function dockerBench(opts: BenchOptions): Promise<BenchRow[]> {
  const base = await ensureDockerEngine();
  const image = imageWithCommand(base, "brain-test/ts-agent", [
    "node",
    join(root, "dist/src/testing/fixtures/nui/ts-agent.js"),
    "http",
    "8090",
  ]);
  const fake = await startFakeProvider();
  fake.setFallback(shellAgent({ slowDelayMs: 0 }));
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
  const docker = {
    options: { image, containerPort: 8090, network: "none", docker_args: ["-v", `${root}:${root}:ro`] },
  };
  log(`docker: new docker session vs warm one, and pi-cli sandboxed vs on the host, ${opts.reps} rounds`);
  try {
    const warm = await brain.create({ harness: "docker", config: docker });
    await firstDelta(warm, "warm up");
    const start = await interleave("docker first delta", opts.reps, {
      warm: async (): Promise<Sample> => {
        const { seconds, foreign } = await timed(() => firstDelta(warm, "hello"));
        return { value: seconds * 1000, foreign };
      },
      cold: async (): Promise<Sample> => {
        let session: Session | undefined;
        const { seconds, foreign } = await timed(async () => {
          session = await brain.create({ harness: "docker", config: docker });
          await firstDelta(session, "hello");
        });
        await session?.close();
        return { value: seconds * 1000, foreign };
      },
    });
    const model = { model: "fake-model" };
    const host = await brain.create({ harness: "pi-cli", config: model });
    const boxed = await brain.create({ harness: "pi-cli-docker", config: model });
    for (const s of [host, boxed]) await settle(s, "List the files here");
    const turn = await interleave("pi-cli turn", opts.reps, {
      host: async (): Promise<Sample> => {
        const { seconds, foreign } = await timed(() => settle(host, "List the files here"));
        return { value: seconds * 1000, foreign };
      },
      sandboxed: async (): Promise<Sample> => {
        const { seconds, foreign } = await timed(() => settle(boxed, "List the files here"));
        return { value: seconds * 1000, foreign };
      },
    });
    return [
      timeRow(
        {
          id: "docker-first-event",
          what: "docker harness: new session's first delta (docker run → netns bridge → /info → /run)",
          unit: "ms",
          baselineWhat: "the same prompt's first delta on a warm docker session",
          notes: ["the TypeScript agent image on the base image, --network none, on this machine's engine"],
        },
        { subject: start.cold, baseline: start.warm },
        { kind: "max", of: "median", value: 5_000 },
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
    ];
  } finally {
    await brain.close();
    await fake.close();
    await removeTemp(home);
  }
}
