// A cluster session whose log holds a damaged message in the middle (a payload that is no batch of events, as a bug
// or a bad node would write one straight onto the session's subject) reads as the embedded store's damaged log
// does (damaged-log.test.ts, damaged-log-read.test.ts): its pages and SSE up to the damage, then an error naming
// the session, the stream and the message's sequence; a fork or restore of a checkpoint before it; and a prompt
// refused at once with that error.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { useNatsCluster } from "../testing/nats-bed.js";
import { publishDamaged, publishEvent } from "../testing/nats-damage.js";
import { startStoreNode, type TestNode } from "../testing/nats-store.js";

const bed = useNatsCluster({ nodes: 1 });

it("serves a log up to a damaged message, forks and restores before it, and refuses a prompt naming it", async () => {
  let node: TestNode | undefined;
  let d: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
  try {
    node = await startStoreNode(bed.cluster, "node-a", { prefix: "damaged", replicas: 1 });
    d = await startTestDaemon({ store: node.store });
    const daemon = d;
    const call = (method: string, path: string, body?: unknown) =>
      raw(daemon.url, method, path, { token: daemon.tokens.admin, ...(body === undefined ? {} : { body }) });
    const client = d.client();
    const { id } = await client.create({ harness: "echo" });
    await collect(client, id, settled((await client.prompt(id, "one two")).turn));
    const checkpoint = (await call("POST", `/v1/sessions/${id}/checkpoints`)).body as { id: string };
    await collect(client, id, settled((await client.prompt(id, "three four")).turn));
    await client.close(id);
    const good = await node.store.lastSeq(id);
    // The damaged message, then a good one after it: the damage is in the middle of the log.
    const damaged = await publishDamaged(node.ctx, id, good + 1);
    await publishEvent(node.ctx, id, good + 2, "session.closed");
    const where = `stream ${node.ctx.stream} message ${damaged}`;

    const page = await call("GET", `/v1/sessions/${id}/log?after=0`);
    const events = (page.body.events ?? []) as SessionEvent[];
    expect({ status: page.status, last: events.at(-1)?.seq }).toEqual({ status: 200, last: good });
    const next = await call("GET", `/v1/sessions/${id}/log?after=${good}`);
    expect(next).toMatchObject({ status: 500, body: { error: { code: "brain_error" } } });
    const said = (next.body.error as { message: string }).message;
    expect(said).toContain(`session ${id}`);
    expect(said).toContain(where);
    expect(said).toContain(`The log of session ${id} is damaged there`);
    expect(said).toContain(`DELETE /v1/sessions/${id}`);

    const sse = await fetch(`${daemon.url}/v1/sessions/${id}/events?after=0`, {
      headers: { authorization: `Bearer ${daemon.tokens.admin}` },
    });
    let got = "";
    const decoder = new TextDecoder();
    try {
      for await (const chunk of sse.body!) got += decoder.decode(chunk as Uint8Array, { stream: true });
    } catch {}
    const ids = [...got.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual(Array.from({ length: good }, (_, i) => i + 1));
    expect(got).toContain(where);

    const fork = await call("POST", `/v1/sessions/${id}/fork`, { checkpoint: checkpoint.id });
    expect(fork.status).toBe(201);
    const forked = fork.body.id as string;
    const turn = await collect(client, forked, settled((await client.prompt(forked, "five")).turn));
    expect(turn.find((e) => e.type === "assistant.message")?.data).toMatchObject({ text: "echo #2: five" });
    const into = mkdtempSync(join(tmpdir(), "natsdamage-restore-"));
    const restored = await call("POST", `/v1/sessions/${id}/restore`, { into, checkpoint: checkpoint.id });
    rmSync(into, { recursive: true, force: true });
    expect(restored.status).toBe(200);

    const prompt = await call("POST", `/v1/sessions/${id}/prompt`, { text: "six" });
    expect(prompt).toMatchObject({ status: 500, body: { error: { code: "brain_error" } } });
    expect((prompt.body.error as { message: string }).message).toContain(where);
    expect(await node.store.lastSeq(id)).toBe(good + 2);
  } finally {
    await d?.cleanup();
    await node?.close();
  }
});
