// The fault matrix, secret side: a grep for every configured secret across everything Brain writes
// ($BRAIN_HOME's files, the daemon's stdout and stderr) after the faults that put secrets within reach: a
// provider error that quotes the key, a runner whose stderr tail quotes it. Also the modes of what it writes.
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FAKE_KEY, startKeyedProvider } from "../../src/harnesses/api/testing/provider.js";
import { tempDir } from "../../src/testing/brain.js";
import type { FakeProvider } from "../../src/testing/fake-provider/index.js";
import { raw } from "../../src/testing/http.js";
import { auditLog, filesUnder, findSecrets, note } from "./audit.js";
import { apiBed, type Bed, processBed, ROOT } from "./families.js";

let fake: FakeProvider;
let bed: Bed | undefined;
const cleanups: (() => void | Promise<void>)[] = [];
beforeAll(async () => {
  fake = await startKeyedProvider();
});
afterEach(async () => {
  await bed?.close();
  bed = undefined;
  fake.reset();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});
afterAll(() => fake.close());

/** A provider that refuses the key and quotes it back, as some real ones do. */
const quotesKey = { error: { status: 401, message: `invalid x-api-key: ${FAKE_KEY}` } };

/** Runs one turn on the bed, closes it, and returns where the key was written (the home is kept until close). */
async function leakedAfterOneTurn(b: Bed): Promise<{ hits: string[]; status: string }> {
  bed = b;
  const session = await b.t.brain.create({ harness: b.harness, config: b.config });
  const outcome = await (await session.prompt(b.trigger)).settled;
  await b.t.brain.close();
  return { hits: findSecrets([FAKE_KEY], [b.home]), status: outcome.status };
}

describe("secret in a provider's error", () => {
  it("api", async (cell) => {
    fake.script([quotesKey]);
    const { hits, status } = await leakedAfterOneTurn(apiBed({ fake }));
    note(cell, { eventsLost: 0, secretsFound: hits.length });
    expect(status).toBe("failed");
    expect(hits).toEqual([]);
  });
});

describe("secret in a runner's stderr tail", () => {
  it("process", async (cell) => {
    const { hits, status } = await leakedAfterOneTurn(processBed("stderr-key", { fake }));
    note(cell, { eventsLost: 0, secretsFound: hits.length });
    expect(status).toBe("failed");
    expect(hits).toEqual([]);
  });
});

/** `brain serve` on a scratch home whose config names the fake provider; its output is kept. */
async function serve(home: string, configDir: string) {
  writeFileSync(
    join(configDir, "brain.config.json"),
    JSON.stringify({
      defaults: {
        harness: "api",
        model: "anthropic:fake-model",
        options: { retries: 0 },
        provider: { base_url: `${fake.url}/v1`, api_key_env: "FAULTS_PROVIDER_KEY" },
      },
    }),
  );
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, "bin/brain.js"), "serve", "--port", "0"], {
    cwd: configDir,
    env: { ...process.env, BRAIN_HOME: home, FAULTS_PROVIDER_KEY: FAKE_KEY },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout?.on("data", (c: Buffer) => (out.stdout += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (out.stderr += c.toString()));
  const closed = new Promise((resolve) => child.on("close", resolve));
  const stop = async () => {
    child.kill("SIGTERM");
    await closed;
  };
  cleanups.push(stop);
  for (let i = 0; i < 200 && !/#token=/.test(out.stdout); i++) await new Promise((r) => setTimeout(r, 50));
  const url = /brain daemon on (http:\/\/\S+)/.exec(out.stdout)?.[1];
  const token = /#token=(\S+)/.exec(out.stdout)?.[1];
  if (!url || !token) throw new Error(`brain serve did not start: ${out.stdout}${out.stderr}`);
  return { url, token, out, stop };
}

describe("secrets across everything written", () => {
  it("daemon", async (cell) => {
    const home = tempDir("brain-faults-home-");
    const configDir = tempDir("brain-faults-config-");
    cleanups.push(() => {
      rmSync(home, { recursive: true, force: true });
      rmSync(configDir, { recursive: true, force: true });
    });
    const daemon = await serve(home, configDir);
    fake.script([quotesKey, { text: "fine" }]);
    const auth = { token: daemon.token };
    const created = await raw(daemon.url, "POST", "/v1/sessions", { ...auth, body: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    for (const text of ["first", "second"]) {
      await raw(daemon.url, "POST", `/v1/sessions/${id}/prompt`, { ...auth, body: { text } });
      for (let i = 0; i < 200; i++) {
        const log = auditLog(join(home, "sessions", id, "events.jsonl"));
        if (log.events.filter((e) => e.type === "turn.settled").length >= (text === "first" ? 1 : 2)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await raw(daemon.url, "POST", `/v1/sessions/${id}/checkpoints`, auth);
    const { out } = daemon;
    await daemon.stop();
    const hits = findSecrets([FAKE_KEY], [home], {
      "daemon stdout": out.stdout,
      "daemon stderr": out.stderr,
    });
    const audit = auditLog(join(home, "sessions", id, "events.jsonl"));
    note(cell, { eventsLost: audit.eventsLost, secretsFound: hits.length });
    expect(audit.events.some((e) => e.type === "turn.settled")).toBe(true);
    expect(hits).toEqual([]);
    // Brain's own files are 0600 in a 0700 session dir; native/ holds the harness's files, behind that dir.
    const dir = join(home, "sessions", id);
    const own = [
      join(dir, "session.json"),
      join(dir, "events.jsonl"),
      ...filesUnder(join(dir, "checkpoints")),
    ];
    const loose = own.map((f) => ({ f, mode: statSync(f).mode & 0o777 })).filter(({ mode }) => mode & 0o077);
    expect(loose).toEqual([]);
    expect(statSync(dir).mode & 0o077).toBe(0);
  });
});
