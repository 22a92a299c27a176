// A peer side by side: the same stream, an agent sending 200-byte message chunks to its client over stdio,
// through the Agent Client Protocol's own TypeScript SDK on both ends (bench/runners/acp-flood-agent.ts and a
// `client()` here), against Brain's runner relay with its durable log (the relay bench's subject).
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";
import { openBenchSession, watchTurn } from "./lib/brain.js";
import { LIKE_BRAIN_RUNNER, makeTemp, removeTemp, spawnTracked, withTimeout } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, rateRow, type Sample, timed } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";

const WARMUP = 5_000;

/** dist/bench → dist/bench/runners/acp-flood-agent.js */
const agentPath = () => fileURLToPath(new URL("./runners/acp-flood-agent.js", import.meta.url));

async function acpFlood(n: number): Promise<Sample> {
  const child = spawnTracked(process.execPath, [agentPath()], {
    ...LIKE_BRAIN_RUNNER,
    stdio: ["pipe", "pipe", "inherit"],
  });
  let chunks = 0;
  const app = client({ name: "bench" }).onNotification(methods.client.session.update, async ({ params }) => {
    if (params.update.sessionUpdate === "agent_message_chunk") chunks++;
  });
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
  );
  try {
    return await app.connectWith(stream, async (ctx) => {
      await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
      const prompt = (k: number) =>
        withTimeout(
          ctx.request(methods.agent.session.prompt, {
            sessionId,
            prompt: [{ type: "text", text: `flood ${k}` }],
          }),
          120_000,
          "acp prompt",
        );
      await prompt(WARMUP);
      chunks = 0;
      const { seconds, foreign } = await timed(() => prompt(n));
      if (chunks !== n) throw new Error(`acp peer: ${chunks} chunks arrived, ${n} sent`);
      return { value: n / seconds, foreign };
    });
  } finally {
    child.kill("SIGKILL");
  }
}

export async function acpPeerBench(opts: BenchOptions): Promise<BenchRow[]> {
  const n = opts.quick ? 20_000 : 50_000;
  log(`acp-peer: ${n} message chunks of 200 B, ACP SDK both ends vs Brain's relay, ${opts.reps} rounds`);
  const samples = await interleave("acp-peer", opts.reps, {
    baseline: () => acpFlood(n),
    subject: async (): Promise<Sample> => {
      const home = await makeTemp("acp-peer-brain");
      const bench = await openBenchSession(home, `flood ${WARMUP}`);
      try {
        const { foreign, result } = await timed(() => watchTurn(bench.session, `flood ${n}`));
        if (result.deltas !== n) throw new Error(`acp-peer relay: ${result.deltas} deltas, ${n} sent`);
        return { value: n / result.seconds, foreign };
      } finally {
        await bench.close();
        await removeTemp(home);
      }
    },
  });
  return [
    rateRow(
      {
        id: "acp-peer",
        what: "Brain's runner relay (durable log) vs the ACP SDK, 200 B chunks agent → client over stdio",
        unit: "events/s",
        baselineWhat:
          "@agentclientprotocol/sdk agent → stdio → SDK client, session/update agent_message_chunk",
        notes: [
          `${n} chunks per run; ACP: session/prompt sent to its response, the agent awaiting each notify`,
          "Brain: the relay bench's subject (runner → Brain → durable log → subscriber)",
        ],
      },
      samples,
      { kind: "min-ratio", ratio: 1.5 },
    ),
  ];
}
