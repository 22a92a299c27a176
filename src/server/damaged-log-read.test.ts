// What is good of a log damaged in the middle still reads: its pages up to the damage (the page after it fails,
// naming the file and the byte), and a fork or restore of a checkpoint taken before the damage, whose history
// ends there. Both read the whole log before, and failed on the damaged line whatever came before it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, settled } from "../testing/http.js";

let t: TestDaemon;
afterAll(() => t?.cleanup());
beforeAll(async () => {
  t = await startTestDaemon();
});

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${t.tokens.admin}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** Bit rot in the line of the second prompt ("three four", after any checkpoint of the first), its length kept. */
function damageSecondPrompt(id: string): { at: number; damagedSeq: number } {
  const file = join(t.home, "sessions", id, "events.jsonl");
  const text = readFileSync(file, "utf8");
  const at = text.indexOf('{"seq":', text.indexOf('"three four"') - 120);
  const damagedSeq = Number(/^\{"seq":(\d+)/.exec(text.slice(at))![1]);
  writeFileSync(file, `${text.slice(0, at)}#${text.slice(at + 1)}`);
  return { at, damagedSeq };
}

it("reads a damaged log up to the damage, and forks and restores a checkpoint taken before it", async () => {
  const client = t.client();
  const { id } = await client.create({ harness: "echo" });
  await collect(client, id, settled((await client.prompt(id, "one two")).turn));
  const checkpoint = (await call("POST", `/v1/sessions/${id}/checkpoints`)).body as { id: string };
  await collect(client, id, settled((await client.prompt(id, "three four")).turn));
  await client.close(id);
  const { at, damagedSeq } = damageSecondPrompt(id);

  const page = await call("GET", `/v1/sessions/${id}/log?after=0`);
  const events = (page.body.events ?? []) as SessionEvent[];
  expect({ status: page.status, last: events.at(-1)?.seq }).toEqual({ status: 200, last: damagedSeq - 1 });
  expect(events.map((e) => e.seq)).toEqual(Array.from({ length: damagedSeq - 1 }, (_, i) => i + 1));
  expect(events.some((e) => e.type === "checkpoint.created")).toBe(true);
  // The next page starts at the damage: it fails, saying where.
  const next = await call("GET", `/v1/sessions/${id}/log?after=${damagedSeq - 1}`);
  expect(next).toMatchObject({ status: 500, body: { error: { code: "brain_error" } } });
  expect(JSON.stringify(next.body)).toContain(`sessions/${id}/events.jsonl: byte ${at}: not valid JSON`);

  const fork = await call("POST", `/v1/sessions/${id}/fork`, { checkpoint: checkpoint.id });
  expect(fork.status).toBe(201);
  const forked = (fork.body as { id: string }).id;
  // Its first turn checks its history, read from the parent's log up to the checkpoint.
  const turn = await collect(client, forked, settled((await client.prompt(forked, "five")).turn));
  expect(turn.at(-1)).toMatchObject({ type: "turn.settled", data: { status: "completed" } });
  // The echo harness numbers its answers: the second, after the one turn before the checkpoint.
  expect(turn.find((e) => e.type === "assistant.message")?.data).toMatchObject({ text: "echo #2: five" });

  const into = mkdtempSync(join(tmpdir(), "damagedread-restore-"));
  const restored = await call("POST", `/v1/sessions/${id}/restore`, { into, checkpoint: checkpoint.id });
  rmSync(into, { recursive: true, force: true });
  expect(restored).toMatchObject({ status: 200 });
  // "latest" cannot be told without the part after the damage: still refused.
  expect((await call("POST", `/v1/sessions/${id}/fork`, {})).status).toBe(500);
});

it("streams a damaged log's events up to the damage, then ends the stream saying where it is", async () => {
  const client = t.client();
  const { id } = await client.create({ harness: "echo" });
  await collect(client, id, settled((await client.prompt(id, "one two")).turn));
  await collect(client, id, settled((await client.prompt(id, "three four")).turn));
  await client.close(id);
  const { at, damagedSeq } = damageSecondPrompt(id);

  const res = await fetch(`${t.url}/v1/sessions/${id}/events?after=0`, {
    headers: { authorization: `Bearer ${t.tokens.admin}` },
  });
  // The stream fails at the damage (the socket is cut, as for any failed read): what came before it is the test.
  let got = "";
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body!) got += decoder.decode(chunk as Uint8Array, { stream: true });
  } catch {}
  const ids = [...got.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  expect(ids).toEqual(Array.from({ length: damagedSeq - 1 }, (_, i) => i + 1));
  expect(got).toContain(
    `: error: event log $BRAIN_HOME/sessions/${id}/events.jsonl: byte ${at}: not valid JSON`,
  );
});
