// Cluster mode with real Brain nodes (`brain serve --nats`, 3 of them, on a 3-node NATS cluster):
//   - a command through a node that does not own the session (forwarded by request-reply) against the same
//     command sent to the owner, interleaved;
//   - failover: the owner SIGKILLed, then the time until another node has taken a prompt and its first event
//     is in the log, over several kills (lease TTL 2 s here; 10 s by default).
import type { ClientError } from "../src/client/errors.js";
import { type BrainNode, startBrainNode } from "../src/testing/brain-node.js";
import { startNatsCluster } from "../src/testing/nats-cluster.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";

const TTL = 2000;

export async function clusterNodesBench(opts: BenchOptions): Promise<BenchRow[]> {
  const commands = opts.quick ? 100 : 300;
  const kills = opts.quick ? 3 : 10;
  log(`cluster-nodes: 3 NATS nodes, 3 Brain nodes; ${commands} commands per run, ${kills} kills`);
  const cluster = await startNatsCluster();
  const nodes: BrainNode[] = [];
  const start = async (name: string) => {
    const node = await startBrainNode(name, cluster.servers, { leaseTtlMs: TTL });
    nodes.push(node);
    return node;
  };
  try {
    for (const name of ["n1", "n2", "n3"]) await start(name);
    const [owner, other] = nodes as [BrainNode, BrainNode];
    await owner.client.create({ id: "cmd", harness: "echo" });
    const run = (node: BrainNode) => async (): Promise<Sample> => {
      const { seconds, foreign } = await timed(async () => {
        for (let i = 0; i < commands; i++) await node.client.takeControl("cmd", "bench");
      });
      return { value: (seconds * 1000) / commands, foreign };
    };
    await run(other)();
    const samples = await interleave("cluster-command", opts.reps, {
      subject: run(other),
      baseline: run(owner),
    });
    const rows = [
      timeRow(
        {
          id: "cluster-command",
          what: "a command (POST .../control) through a node that does not own the session",
          unit: "ms",
          baselineWhat: "the same command sent to the owner",
          notes: [
            `${commands} sequential commands per run; the other node forwards each by NATS request-reply`,
          ],
        },
        samples,
        { kind: "none" },
      ),
    ];

    const failovers: Sample[] = [];
    for (let k = 0; k < kills; k++) {
      const live = nodes.slice(-3);
      const [victim, taker] = live as [BrainNode, BrainNode];
      const id = `fo${k}`;
      await victim.client.create({ id, harness: "echo" });
      const first = await victim.client.prompt(id, "one");
      await waitFor(async () =>
        (await victim.client.log(id)).events.some((e) => e.type === "turn.settled" && e.turn === first.turn),
      );
      await victim.kill();
      const t0 = Date.now();
      let turn: string | undefined;
      while (!turn) {
        try {
          turn = (await taker.client.prompt(id, "two")).turn;
        } catch (err) {
          if ((err as ClientError).status !== 409) throw err;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      await waitFor(async () => (await taker.client.log(id)).events.some((e) => e.turn === turn));
      failovers.push({ value: Date.now() - t0, foreign: 0 });
      log(`  failover ${k + 1}/${kills}: ${Date.now() - t0} ms`);
      await start(`n${nodes.length + 1}`);
    }
    rows.push(
      timeRow(
        {
          id: "cluster-failover",
          what: `failover: owner SIGKILLed → first event of a prompt on another node (lease TTL ${TTL} ms)`,
          unit: "ms",
          notes: [
            `${kills} kills; bounded by the lease TTL (the default 10 s: BRAIN_LEASE_TTL_MS) plus the restore`,
          ],
        },
        { subject: failovers },
        { kind: "none" },
      ),
    );
    return rows;
  } finally {
    await Promise.allSettled(nodes.map((n) => n.stop()));
    await cluster.stop();
  }
}

async function waitFor(check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error("cluster-nodes: timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}
