// `brain run --harness pi` end to end: the CLI's built-in pi harness, a brain.config.json that points at an
// OpenAI-compatible endpoint (the fake provider) with the key in an environment variable.
import { execFile } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { tempDir } from "../../src/testing/brain.js";
import { type FakeProvider, startFakeProvider } from "../../src/testing/fake-provider/index.js";
import { API_KEY, ROOT } from "./helpers.js";

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider({ apiKey: API_KEY });
});
afterAll(async () => {
  await fake.close();
});

describe("brain run --harness pi", () => {
  it("answers a prompt through runners/pi against the endpoint in brain.config.json", async () => {
    const dir = tempDir("pi-cli-");
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const config = {
      defaults: {
        model: "openai/fake-model",
        tools: ["echo"],
        provider: { base_url: `${fake.url}/v1`, api: "openai-completions", api_key_env: "BRAIN_TEST_PI_KEY" },
      },
    };
    writeFileSync(join(dir, "brain.config.json"), JSON.stringify(config));
    fake.script([
      { toolCalls: [{ name: "echo", arguments: { value: "from the cli" } }] },
      { text: "All done." },
    ]);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, "bin/brain.js"), "run", "--harness", "pi", "--json", "Use the echo tool."],
      { cwd: dir, env: { ...process.env, BRAIN_HOME: join(dir, "home"), BRAIN_TEST_PI_KEY: API_KEY } },
    );
    const events = stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> });
    expect(events.find((e) => e.type === "tool.result")?.data).toMatchObject({ is_error: false });
    expect(events.filter((e) => e.type === "assistant.message").at(-1)?.data).toMatchObject({
      text: "All done.",
    });
    expect(events.at(-1)).toMatchObject({ type: "turn.settled", data: { status: "completed" } });
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  }, 60_000);
});
