// A session's event stream from a daemon that hangs (SIGSTOP: its connections stay open and nothing comes, not even
// the heartbeat it sends every 15 s). The stream waited for ever; it now takes silence past `silenceMs` as a drop,
// says so, reconnects, and once the daemon answers again goes on after the last event it gave, losing nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { freePort } from "../core/free-port.js";
import type { SessionEvent } from "../protocol/events.js";
import { readTokens, tokensPath } from "../server/auth/tokens.js";
import { until } from "../testing/processes.js";
import { killed, serve } from "../testing/serve-process.js";
import { BrainClient } from "./client.js";

vi.setConfig({ testTimeout: 120_000 });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it("reconnects a stream whose daemon went silent, saying why, and loses no event", async () => {
  const home = mkdtempSync(join(tmpdir(), "brain-silent-"));
  cleanups.push(async () => rmSync(home, { recursive: true, force: true }));
  const port = await freePort();
  const child = await serve(home, port);
  cleanups.push(async () => {
    child.kill("SIGCONT");
    await killed(child, "SIGTERM");
  });
  const token = readTokens(tokensPath(home)).tokens[0]!.token;
  const client = new BrainClient({ url: `http://127.0.0.1:${port}`, token });
  const { id } = await client.create({ harness: "echo" });

  const seen: SessionEvent[] = [];
  const drops: string[] = [];
  const stop = new AbortController();
  const reading = (async () => {
    const events = client.events(id, {
      signal: stop.signal,
      silenceMs: 3_000,
      retryMs: 200,
      onDrop: (_last, reason) => drops.push(reason),
    });
    for await (const event of events) seen.push(event);
  })();
  const settled = () => seen.filter((e) => e.type === "turn.settled").length;

  await client.prompt(id, "one");
  await until(() => settled() === 1);
  drops.length = 0;
  child.kill("SIGSTOP");
  await until(() => drops.length > 0);
  expect(drops[0]).toBe("the daemon sent nothing, not even its heartbeat, for 3 s");

  child.kill("SIGCONT");
  await client.prompt(id, "two");
  await until(() => settled() === 2);
  stop.abort();
  await reading;
  const seqs = seen.map((e) => e.seq);
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
});
