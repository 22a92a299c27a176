// `brain run --harness api --model provider:model` as a user runs it: a real brain process, a brain.config.json
// pointing the provider at a compatible endpoint (the fake provider), the key in a variable the config names.
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { tempDir } from "../../testing/brain.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import { fixtureStdio } from "../../tools/mcp/testing/servers.js";
import { baseUrlFor, FAKE_KEY, PROVIDER_FORMATS, startKeyedProvider } from "./testing/provider.js";

const root = join(import.meta.dirname, "../../..");
const dirs: string[] = [];
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startKeyedProvider();
});
afterEach(() => fake.reset());
afterAll(async () => {
  await fake.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A working dir with brain.config.json holding `defaults`, and a $BRAIN_HOME of its own. */
function workspace(defaults: Record<string, unknown>): { cwd: string; home: string } {
  const cwd = tempDir("brain-api-cli-");
  dirs.push(cwd);
  writeFileSync(join(cwd, "brain.config.json"), JSON.stringify({ defaults }));
  return { cwd, home: join(cwd, "home") };
}

function brain(args: string[], where: { cwd: string; home: string }, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [join(root, "bin/brain.js"), ...args], {
    cwd: where.cwd,
    env: { PATH: process.env.PATH ?? "", BRAIN_HOME: where.home, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  return new Promise<{ code: number | null; out: string; err: string; events: () => SessionEvent[] }>(
    (resolve) =>
      child.once("close", (code) =>
        resolve({
          code,
          out,
          err,
          events: () =>
            out
              .split("\n")
              .filter(Boolean)
              .map((line) => JSON.parse(line) as SessionEvent),
        }),
      ),
  );
}

describe.each(Object.keys(PROVIDER_FORMATS))("brain run --harness api --model %s:…", (provider) => {
  it("answers, calling a bound tool on the way", async () => {
    const where = workspace({
      provider: { base_url: baseUrlFor(provider, fake), api_key_env: "MY_PROVIDER_KEY" },
    });
    fake.script([
      { toolCalls: [{ name: "echo", arguments: { value: "tool says hi" } }] },
      { text: "All done." },
    ]);
    const run = await brain(
      ["run", "--harness", "api", "--model", `${provider}:fake-model`, "--tool", "echo", "please", "echo"],
      where,
      { MY_PROVIDER_KEY: FAKE_KEY },
    );
    expect(run.err).toContain("[tool result: tool says hi]");
    expect(run.out).toBe("All done.\n");
    expect(run.code).toBe(0);
    expect(fake.requests.map((r) => r.format)).toEqual([
      PROVIDER_FORMATS[provider as keyof typeof PROVIDER_FORMATS],
      expect.any(String),
    ]);
  });
});

describe("brain run on the api harness", () => {
  const provider = () => ({ base_url: `${fake.url}/v1`, api_key_env: "MY_PROVIDER_KEY" });

  it("says where the key should come from when it is missing", async () => {
    // The session's provider gives no key: the host's ANTHROPIC_API_KEY is not taken for its endpoint.
    const where = workspace({ provider: { base_url: `${fake.url}/v1` } });
    const run = await brain(["run", "--harness", "api", "--model", "anthropic:m", "hi"], where, {
      ANTHROPIC_API_KEY: FAKE_KEY,
    });
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/no API key for anthropic: this session's key can come only from its provider/);
    // No provider: the operator's own run reads the usual variables, and says which one to set.
    const bare = await brain(["run", "--harness", "api", "--model", "anthropic:m", "hi"], workspace({}));
    expect(bare.err).toMatch(/no API key for anthropic: set ANTHROPIC_API_KEY/);
    expect(fake.requests).toHaveLength(0);
  });

  it("runs a session naming no provider on the usual variables, as the operator's own run", async () => {
    fake.script([{ text: "from the environment" }]);
    const run = await brain(["run", "--harness", "api", "--model", "anthropic:m", "hi"], workspace({}), {
      ANTHROPIC_API_KEY: FAKE_KEY,
      ANTHROPIC_BASE_URL: fake.url,
    });
    expect(run.out).toBe("from the environment\n");
    expect(run.code).toBe(0);
  });

  it("starts the session's MCP servers from the config and lets the model call them", async () => {
    const where = workspace({ provider: provider(), mcp_servers: { fx: fixtureStdio() } });
    fake.script([{ toolCalls: [{ name: "fx__echo", arguments: { text: "from mcp" } }] }, { text: "ok" }]);
    const run = await brain(["run", "--harness", "api", "--model", "anthropic:m", "--json", "go"], where, {
      MY_PROVIDER_KEY: FAKE_KEY,
    });
    expect(run.code).toBe(0);
    const events = run.events();
    expect(events.find((e) => e.type === "tool.service")?.data).toMatchObject({
      service: "fx",
      state: "started",
    });
    expect(events.find((e) => e.type === "tool.result")?.data).toMatchObject({
      content: [{ text: "from mcp" }],
    });
  });

  it("applies --allow and --deny to asks, and denies with a hint when there is no terminal", async () => {
    const where = workspace({ provider: provider(), permissions: { tools: { echo: "ask" } } });
    const args = ["run", "--harness", "api", "--model", "anthropic:m", "--tool", "echo", "--json"];
    const env = { MY_PROVIDER_KEY: FAKE_KEY };
    const result = (run: { events: () => SessionEvent[] }) =>
      run.events().find((e) => e.type === "tool.result")?.data as {
        is_error: boolean;
        content: { text: string }[];
      };

    fake.script([{ toolCalls: [{ name: "echo", arguments: { value: "v" } }] }, { text: "ok" }]);
    expect(result(await brain([...args, "--allow", "echo", "x"], where, env))).toMatchObject({
      is_error: false,
    });
    fake.script([{ toolCalls: [{ name: "echo", arguments: { value: "v" } }] }, { text: "ok" }]);
    expect(result(await brain([...args, "--deny", "echo", "x"], where, env)).content[0]?.text).toMatch(
      /--deny/,
    );
    fake.script([{ toolCalls: [{ name: "echo", arguments: { value: "v" } }] }, { text: "ok" }]);
    expect(result(await brain([...args, "x"], where, env)).content[0]?.text).toMatch(/run with --allow echo/);
  });
});
