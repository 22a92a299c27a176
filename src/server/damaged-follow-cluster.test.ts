// A damaged message (a payload that is no batch of events) appended to a cluster session's log while watchers
// follow it live through the store ends their streams as a read of it does (damaged-log-cluster.test.ts): the
// events before it, then a comment naming the damage, then the end. The follow used to say it failed and try
// again for ever (the message is still there each time), and its watchers got nothing more and were told nothing.
import { expect, it } from "vitest";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, settled } from "../testing/http.js";
import { useNatsCluster } from "../testing/nats-bed.js";
import { publishDamaged, publishEvent } from "../testing/nats-damage.js";
import { startStoreNode, type TestNode } from "../testing/nats-store.js";
import { until } from "../testing/processes.js";

const bed = useNatsCluster({ nodes: 1 });

/** An SSE stream of a session's events after seq 0, read as it comes. */
function watch(url: string, token: string, id: string) {
  const abort = new AbortController();
  const state = { text: "", ended: false };
  const ids = () => [...state.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  const done = (async () => {
    try {
      const res = await fetch(`${url}/v1/sessions/${id}/events?after=0`, {
        headers: { authorization: `Bearer ${token}` },
        signal: abort.signal,
      });
      const decoder = new TextDecoder();
      for await (const chunk of res.body!)
        state.text += decoder.decode(chunk as Uint8Array, { stream: true });
    } catch {}
    state.ended = true;
  })();
  const stop = () => {
    abort.abort();
    return done;
  };
  return { state, ids, stop };
}

it("ends a live follower's stream at a damaged message appended while it follows, and no other", async () => {
  let node: TestNode | undefined;
  let d: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
  const watchers: ReturnType<typeof watch>[] = [];
  const warnings: string[] = [];
  try {
    node = await startStoreNode(bed.cluster, "node-a", {
      prefix: "damagedfollow",
      replicas: 1,
      warn: (message) => warnings.push(message),
    });
    d = await startTestDaemon({ store: node.store });
    const client = d.client();
    const ids: string[] = [];
    for (const text of ["one two", "three"]) {
      const { id } = await client.create({ harness: "echo" });
      await collect(client, id, settled((await client.prompt(id, text)).turn));
      // Closed: no live log on this node, so its watchers follow the log through the store.
      await client.close(id);
      ids.push(id);
    }
    const [id, other] = ids as [string, string];
    const good = await node.store.lastSeq(id);
    const otherGood = await node.store.lastSeq(other);
    const [damagedWatch, otherWatch] = ids.map((s) => watch(d!.url, d!.tokens.admin, s)) as [
      ReturnType<typeof watch>,
      ReturnType<typeof watch>,
    ];
    watchers.push(damagedWatch, otherWatch);
    await until(() => damagedWatch.ids().at(-1) === good && otherWatch.ids().at(-1) === otherGood);

    const damaged = await publishDamaged(node.ctx, id, good + 1);
    await publishEvent(node.ctx, id, good + 2, "session.closed");
    const retried = () => warnings.some((w) => /following it again/.test(w));
    await until(() => damagedWatch.state.ended || retried());
    expect({ ended: damagedWatch.state.ended, retried: retried() }).toEqual({ ended: true, retried: false });
    expect(damagedWatch.ids()).toEqual(Array.from({ length: good }, (_, i) => i + 1));
    const comment = damagedWatch.state.text.split("\n").find((line) => line.startsWith(": error: "));
    expect(comment).toContain(`session ${id}`);
    expect(comment).toContain(`stream ${node.ctx.stream} message ${damaged}`);
    expect(comment).toContain(`The log of session ${id} is damaged there`);

    // The other session's watcher still follows its log.
    await publishEvent(node.ctx, other, otherGood + 1, "session.closed");
    await until(() => otherWatch.ids().at(-1) === otherGood + 1);
    expect(otherWatch.state.ended).toBe(false);
    // The follow said once why it stopped, and was never made again at the damage.
    expect(retried()).toBe(false);
    const stopped = warnings.filter((w) => w.includes(`session ${id}'s log stopped after seq ${good}:`));
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toContain(`stream ${node.ctx.stream} message ${damaged}`);
  } finally {
    await Promise.all(watchers.map((w) => w.stop()));
    await d?.cleanup();
    await node?.close();
  }
}, 60_000);
