// A Brain keeps a provider key's encoded forms (secret-forms.ts) out of what a session keeps: the model streams the
// key base64'd, percent-encoded and with its `/` escaped, split over many deltas, and has a tool print them; none
// reaches events.jsonl on disk. And a checkpoint whose native file holds the key base64'd is refused as one holding
// the plain key is.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ProcessFactory } from "../harnesses/process/factory.js";
import { FsSessionStore } from "../store/fs/index.js";
import { tempDir } from "../testing/brain.js";
import { startFakeProvider } from "../testing/fake-provider/index.js";
import { givesAway, stringsIn } from "../testing/gives-away.js";
import { useBrainAndProvider } from "../testing/use-brain-provider.js";
import { BuiltinTools } from "../tools/builtin.js";
import { ToolRouter } from "../tools/router.js";
import { Brain } from "./brain.js";
import { HarnessRegistry } from "./registry.js";
import type { Session } from "./session.js";

const KEY = "gw-Zk9/+q2=Xy7Lm0Pq/4sT8vW~";
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const base64 = (text: string) => Buffer.from(text).toString("base64");
const FORMS = [
  `base64 ${base64(KEY)}`,
  `Basic ${base64(`user:${KEY}`)}`,
  `curl -v > GET /v1/models?key=${encodeURIComponent(KEY)}`,
  `php {"key":"${KEY.replaceAll("/", "\\/")}"}`,
];

describe("a Brain keeps a key's encoded forms out of", () => {
  const made = useBrainAndProvider();

  /** A session of the scripted runner (the model loop over the fake provider), whose key is MY_LLM. */
  async function session(home: string): Promise<Session> {
    const provider = made.keepProvider(await startFakeProvider());
    const runner = new ProcessFactory({
      name: "scripted",
      command: process.execPath,
      args: [join(root, "dist/src/testing/fixtures/scripted-runner.js")],
    });
    const brain = made.keepBrain(
      new Brain({
        store: new FsSessionStore(home),
        harnesses: new HarnessRegistry([runner]),
        tools: new ToolRouter([new BuiltinTools()]),
        env: { PATH: process.env.PATH, MY_LLM: KEY },
      }),
    );
    return brain.create({
      harness: "scripted",
      provider: { base_url: `${provider.url}/v1`, api_key_env: "MY_LLM" },
      config: { model: "fake-model", tools: ["echo"] },
    });
  }

  it("events.jsonl: a tool's result and the model's deltas that split them", async () => {
    const home = tempDir();
    const s = await session(home);
    made.provider!.script([
      { toolCalls: [{ name: "echo", arguments: { value: FORMS.join("\n") } }] },
      // Seven characters a delta: every form is split over several.
      { text: `the key: ${FORMS.join(", ")}. done`, chunkSize: 7 },
    ]);
    const outcome = await (await s.prompt("print the key")).settled;
    expect(outcome.status).toBe("completed");
    // Read back through the log (the file packs a turn's deltas into lines of their texts)...
    const events = await s.log.read(0);
    const deltas = events.filter((e) => e.type === "assistant.delta");
    expect(deltas.length).toBeGreaterThan(10);
    const streamed = deltas.map((e) => e.data.text).join("");
    expect(streamed).toMatch(/^the key: base64 \[redacted:MY_LLM\].*\. done$/s);
    expect(streamed.split("[redacted:MY_LLM]")).toHaveLength(FORMS.length + 1);
    const result = events.find((e) => e.type === "tool.result");
    expect(stringsIn(result?.data).join("").split("[redacted:MY_LLM]")).toHaveLength(FORMS.length + 1);
    // ...and every string of every line of the file on disk.
    const lines = readFileSync(join(home, "sessions", s.id, "events.jsonl"), "utf8").split("\n");
    const written = stringsIn(lines.filter((line) => line !== "").map((line) => JSON.parse(line)));
    expect(written.join("")).toContain("the key: base64 [redacted:MY_LLM]");
    for (const text of written) expect(givesAway(text, KEY), text).toBe(false);
  });

  it.each([
    ["base64'd", base64(`user:${KEY}`), "base64-encoded, "],
    ["as it is", KEY, ""],
  ])("a checkpoint whose native file holds the key %s", async (_, written, how) => {
    const s = await session(tempDir());
    made.provider!.script([{ text: `the model says: ${written} ok` }]);
    expect((await (await s.prompt("print the key")).settled).status).toBe("completed");
    // The runner's conversation.jsonl holds the model's answer as it came: the checkpoint is refused.
    await expect(s.checkpoint()).rejects.toThrow(
      new RegExp(`"conversation\\.jsonl".*\\(the value of MY_LLM, ${how}at byte \\d+\\)`),
    );
  });
});
