// Secrets never reach a session's log: the redactor, the log boundary (deltas split a secret), stderr tails, a
// provider's 401 that quotes the key, and a runner that prints the key on stderr before it dies.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ApiHarnessFactory } from "../harnesses/api/factory.js";
import { ProcessFactory } from "../harnesses/process/factory.js";
import { FsSessionStore, JsonlEventLog } from "../store/fs/index.js";
import { retireSegments } from "../store/fs/retire.js";
import { tempDir } from "../testing/brain.js";
import { startFakeProvider } from "../testing/fake-provider/index.js";
import { memoryLog } from "../testing/memory-log.js";
import { useBrainAndProvider } from "../testing/use-brain-provider.js";
import { BuiltinTools } from "../tools/builtin.js";
import { ToolRouter } from "../tools/router.js";
import { Brain } from "./brain.js";
import type { HarnessFactory } from "./harness.js";
import { envSecrets, Redactor, tailOf } from "./redact.js";
import { redactingLog } from "./redacting-log.js";
import { HarnessRegistry } from "./registry.js";

const KEY = "sk-test-0123456789abcdefSECRET";
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

describe("Redactor", () => {
  it("replaces every configured secret, longest first, and leaves short values alone", () => {
    const r = new Redactor([
      { name: "OPENAI_API_KEY", value: KEY },
      { name: "PART", value: "0123456789abcdef" },
      { name: "SHORT", value: "1234" },
    ]);
    expect(r.redact(`key ${KEY} and 0123456789abcdef, port 1234`)).toBe(
      "key [redacted:OPENAI_API_KEY] and [redacted:PART], port 1234",
    );
    expect(r.redactDeep({ a: [{ b: `x${KEY}` }], n: 1 })).toEqual({
      a: [{ b: "x[redacted:OPENAI_API_KEY]" }],
      n: 1,
    });
  });

  it("takes secret-named variables and the named ones from an environment", () => {
    const env = {
      OPENAI_API_KEY: KEY,
      DB_PASSWORD: "hunter2-hunter2",
      LLM: "plain-but-named",
      HOME: "/home/someone",
    };
    expect(
      envSecrets(env, ["LLM"])
        .map((s) => s.name)
        .sort(),
    ).toEqual(["DB_PASSWORD", "LLM", "OPENAI_API_KEY"]);
  });

  it("replaces a secret as a JSON string writes it too (a server's answer or a tool's result quoting it)", () => {
    const password = 'pa"ss\\word\tend';
    const redactor = new Redactor([{ name: "DB_PASSWORD", value: password }]);
    const answer = `401: ${JSON.stringify({ error: `login with ${password} refused` })}`;
    expect(redactor.redact(answer)).toBe('401: {"error":"login with [redacted:DB_PASSWORD] refused"}');
    expect(redactor.redact(`raw ${password}`)).toBe("raw [redacted:DB_PASSWORD]");
    // A stream holds back as much of a delta's tail as the longest form could need: here the percent-encoded one
    // (secret-forms.ts), longer than the JSON-escaped one.
    expect(JSON.stringify(password).length - 2).toBeLessThan(encodeURIComponent(password).length);
    expect(redactor.maxLength).toBe(encodeURIComponent(password).length);
  });

  it("cuts a tail at a word, so a secret cut in two shows no part of itself", () => {
    const text = `start ${KEY} middle and the end`;
    const cut = tailOf(text, text.length - 10); // starts inside the key
    expect(cut).toBe("middle and the end");
    expect(tailOf("short", 100)).toBe("short");
  });
});

describe("the log boundary", () => {
  it("redacts every event and holds back a delta tail until the next one shows it is a secret", async () => {
    const inner = memoryLog();
    const log = redactingLog(inner, new Redactor([{ name: "K", value: KEY }]));
    await log.append([
      { type: "assistant.delta", turn: "t", data: { text: `the key is ${KEY.slice(0, 10)}` } },
    ]);
    await log.append([{ type: "assistant.delta", turn: "t", data: { text: `${KEY.slice(10)}, ok` } }]);
    await log.append([
      { type: "assistant.message", turn: "t", data: { text: `the key is ${KEY}, ok` } },
      {
        type: "turn.settled",
        turn: "t",
        data: { status: "failed", error: { code: "provider_error", message: `bad ${KEY}` } },
      },
    ]);
    const file = JSON.stringify(inner.stored);
    expect(file).not.toContain(KEY);
    expect(file).not.toContain(KEY.slice(0, 10));
    const deltas = inner.stored
      .filter((e) => e.type === "assistant.delta")
      .map((e) => (e.data as { text: string }).text);
    expect(deltas.join("")).toBe("the key is [redacted:K], ok");
    expect(inner.stored.at(-1)?.data).toEqual({
      status: "failed",
      error: { code: "provider_error", message: "bad [redacted:K]" },
    });
  });

  it("releases a held tail that was not a secret before the next event", async () => {
    const inner = memoryLog();
    const log = redactingLog(inner, new Redactor([{ name: "K", value: KEY }]));
    await log.append([{ type: "assistant.delta", turn: "t", data: { text: "ends with sk-" } }]);
    await log.append([{ type: "turn.settled", turn: "t", data: { status: "completed" } }]);
    expect(inner.stored.map((e) => e.type)).toEqual(["assistant.delta", "assistant.delta", "turn.settled"]);
    const deltas = inner.stored
      .filter((e) => e.type === "assistant.delta")
      .map((e) => (e.data as { text: string }).text);
    expect(deltas.join("")).toBe("ends with sk-");
  });

  it("releases a held tail in its place before a tool call, and at the log's close", async () => {
    const inner = memoryLog();
    const log = redactingLog(inner, new Redactor([{ name: "K", value: KEY }]));
    await log.append([{ type: "assistant.delta", turn: "t", data: { text: "calling sk-" } }]);
    await log.append([{ type: "tool.call", turn: "t", data: { id: "c1", name: "x", arguments: {} } }]);
    await log.append([{ type: "assistant.delta", turn: "t", data: { text: "then sk-" } }]);
    await log.close();
    const shown = inner.stored.map((e) => (e.type === "assistant.delta" ? e.data.text : e.type));
    expect(shown.join("|")).toMatch(/^calling \|sk-\|tool\.call\|then \|sk-$/);
  });

  it("catches a secret of non-ASCII characters (and one outside the BMP) split over two deltas", async () => {
    const secret = "pässwörd-Ünïcødé-🔑-geheim";
    const inner = memoryLog();
    const log = redactingLog(inner, new Redactor([{ name: "P", value: secret }]));
    // Cut inside the key emoji's surrogate pair, and inside the run of non-ASCII characters.
    const cut = secret.indexOf("🔑") + 1;
    await log.append([
      { type: "assistant.delta", turn: "t", data: { text: `it is ${secret.slice(0, cut)}` } },
    ]);
    await log.append([{ type: "assistant.delta", turn: "t", data: { text: `${secret.slice(cut)} ok` } }]);
    await log.close();
    const shown = inner.stored.map((e) => (e.data as { text: string }).text);
    expect(shown.join("")).toBe("it is [redacted:P] ok");
    for (const text of shown) expect(text).not.toContain("Ünïcødé");
  });

  it("learns a secret once the session runs, and keeps it out from then on", async () => {
    const inner = memoryLog();
    const redactor = new Redactor();
    const log = redactingLog(inner, redactor);
    redactor.add([{ name: "K", value: KEY }]);
    await log.append([{ type: "harness.warning", turn: "t", data: { message: `saw ${KEY}` } }]);
    expect(JSON.stringify(inner.stored)).not.toContain(KEY);
  });

  it("holds back the same tail whether or not it starts a secret, so what is shown when says nothing of a secret", async () => {
    // A tenant that makes its model (or the echo runner) end a delta with a guess could tell from when the guess
    // reached the log whether it starts a key or another tenant's token, and so read either out a character a time.
    const redactor = new Redactor([{ name: "K", value: KEY }]);
    const shownAtOnce = async (text: string) => {
      const inner = memoryLog();
      await redactingLog(inner, redactor).append([{ type: "assistant.delta", turn: "t", data: { text } }]);
      return inner.stored.map((e) => (e.data as { text: string }).text).join("");
    };
    // Each guess beside a wrong one made of the key's own characters: which characters keys use is all it learns.
    for (const [guess, wrong] of [
      ["sk-test-0", "sk-test-9"],
      ["sk-", "skS"],
      ["s", "k"],
    ]) {
      const [right, other] = [await shownAtOnce(`a guess: ${guess}`), await shownAtOnce(`a guess: ${wrong}`)];
      expect(right.length).toBe(other.length);
    }
  });

  it("says where the log starts once retention has dropped its oldest segments", async () => {
    const file = join(tempDir(), "events.jsonl");
    const written = await JsonlEventLog.open(file, "s1", undefined, { segmentBytes: 1024 });
    for (let i = 0; i < 40; i++) {
      await written.append([{ type: "user.prompt", turn: `t${i}`, data: { text: "x".repeat(40) } }]);
    }
    await written.close();
    const { firstSeq } = await retireSegments(file, "s1", { dropAfterMs: 0 });
    expect(firstSeq).toBeGreaterThan(1);
    const inner = await JsonlEventLog.open(file, "s1");
    try {
      // What a live session's readers are told (GET …/log's first_seq, the stream's dropped notice).
      expect(redactingLog(inner, new Redactor([{ name: "K", value: KEY }])).firstSeq).toBe(firstSeq);
    } finally {
      await inner.close();
    }
  });
});

describe("a Brain keeps keys out of events.jsonl", () => {
  const made = useBrainAndProvider();

  function brainWith(factories: HarnessFactory[], home: string): Brain {
    return new Brain({
      store: new FsSessionStore(home),
      harnesses: new HarnessRegistry(factories),
      tools: new ToolRouter([new BuiltinTools()]),
      env: { PATH: process.env.PATH, MY_LLM: KEY },
      providers: { fake: { api: "openai-chat", base_url: "unused", api_key_env: "MY_LLM" } },
    });
  }

  const eventsFile = (home: string, id: string) =>
    readFileSync(join(home, "sessions", id, "events.jsonl"), "utf8");

  it("when the provider's 401 quotes the key", async () => {
    const provider = made.keepProvider(await startFakeProvider());
    provider.script([{ error: { status: 401, message: `Incorrect API key provided: ${KEY}` } }]);
    const home = tempDir();
    const brain = made.keepBrain(
      new Brain({
        store: new FsSessionStore(home),
        harnesses: new HarnessRegistry([new ApiHarnessFactory()]),
        tools: new ToolRouter([new BuiltinTools()]),
        env: { MY_LLM: KEY },
        providers: { fake: { api: "openai-chat", base_url: `${provider.url}/v1`, api_key_env: "MY_LLM" } },
      }),
    );
    const session = await brain.create({ harness: "api", provider: "fake", config: { model: "fake-model" } });
    const outcome = await (await session.prompt("hi")).settled;
    expect(outcome.status).toBe("failed");
    expect(provider.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    const file = eventsFile(home, session.id);
    expect(file).toContain("Incorrect API key provided");
    expect(file).toContain("[redacted:MY_LLM]");
    expect(file).not.toContain(KEY);
  });

  it("when a runner prints the key on stderr and dies", async () => {
    const provider = made.keepProvider(await startFakeProvider());
    const home = tempDir();
    const runner = new ProcessFactory({
      name: "scripted",
      command: process.execPath,
      args: [join(root, "dist/src/testing/fixtures/scripted-runner.js"), "--mode", "stderr-key"],
    });
    const brain = made.keepBrain(brainWith([runner], home));
    const session = await brain.create({
      harness: "scripted",
      provider: { base_url: `${provider.url}/v1`, api_key_env: "MY_LLM" },
      config: { model: "fake-model" },
    });
    const outcome = await (await session.prompt("hi")).settled;
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.message).toContain("stderr ended with");
    const file = eventsFile(home, session.id);
    expect(file).toContain("Bearer [redacted:MY_LLM] was refused");
    expect(file).not.toContain(KEY);
  });

  it("refuses an unknown provider name before writing anything, naming the configured ones", async () => {
    const home = tempDir();
    const brain = made.keepBrain(brainWith([new ApiHarnessFactory()], home));
    await expect(brain.create({ harness: "api", provider: "MY_LLM" })).rejects.toThrow(
      'unknown provider "MY_LLM" (configured: fake)',
    );
    expect(await brain.list()).toEqual([]);
  });

  it("refuses a provider name that is only a property every object has (constructor, __proto__)", async () => {
    const brain = made.keepBrain(brainWith([new ApiHarnessFactory()], tempDir()));
    for (const name of ["constructor", "__proto__", "toString"]) {
      await expect(brain.create({ harness: "api", provider: name })).rejects.toThrow(
        `unknown provider "${name}" (configured: fake)`,
      );
    }
    expect(await brain.list()).toEqual([]);
  });
});
