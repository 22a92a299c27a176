// The key of a provider without a base_url, for the CLIs that choose the vendor from the model's name (pi,
// opencode): it goes only in the variable of the vendor the provider's `api` names. Were it in every vendor's
// variable, a client's model of another vendor ("openai/gpt-4o" on an Anthropic provider) would have the CLI
// send the key to that vendor; and a provider whose key names no vendor is refused, since whichever variable held
// it, the model's name would choose where it goes. A family that speaks to one vendor (Claude Code, Codex, the
// ACP presets) refuses such a key too: a client's choice of family would send it to that vendor. The program is
// a stand-in that writes down its environment. Even that variable holds only Brain's credential proxy's token,
// and the CLI's own provider of that vendor is pointed at the proxy, which holds the key.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { HarnessFactory } from "../../core/harness.js";
import type { ProviderCredentials } from "../../protocol/runner.js";
import { tempDir } from "../../testing/brain.js";
import { bareHarnessOptions } from "../../testing/cli.js";
import { AcpFactory, presetDescriptor } from "../acp-agent/factory.js";
import { PRESETS } from "../acp-agent/presets.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";
import { CodexFactory } from "../codex/factory.js";
import { OpencodeFactory } from "../opencode/factory.js";
import { PiCliFactory } from "../pi-cli/factory.js";
import { PROXY_VARIABLE } from "./proxy-variable.js";

const KEY = "sk-vendor-keys-test-0123456789";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A stand-in program that writes its environment to `out`, and options for a session on it. */
function standIn(provider: ProviderCredentials) {
  const dir = tempDir("brain-vendor-keys-");
  dirs.push(dir);
  const out = join(dir, "env.json");
  const bin = join(dir, "program");
  const record = `require("node:fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.env));`;
  writeFileSync(bin, `#!/usr/bin/env node\n${record}\n`, { mode: 0o755 });
  const native = join(dir, "native");
  mkdirSync(native);
  const options = bareHarnessOptions(native, { config: { model: "openai/gpt-4o" }, provider });
  return { out, bin, options };
}

/** The environment the family's program was started with, and the session's native dir. */
async function started(
  makeFactory: (options: { bin: string }) => HarnessFactory,
  provider: ProviderCredentials,
): Promise<{ env: Record<string, string>; native: string }> {
  const { out, bin, options } = standIn(provider);
  const harness = await makeFactory({ bin }).open(options);
  const turn = harness.prompt("hello", { turn: "t1", signal: new AbortController().signal });
  await expect(turn).rejects.toThrow(/exited with code 0/);
  await harness.close();
  return { env: JSON.parse(readFileSync(out, "utf8")) as Record<string, string>, native: options.dir };
}

/** The variables that hold the key, or the credential proxy's token standing for it. */
async function keyVariables(
  makeFactory: (options: { bin: string }) => HarnessFactory,
  provider: ProviderCredentials,
): Promise<string[]> {
  const { env } = await started(makeFactory, provider);
  const token = env[PROXY_VARIABLE]?.split("/").pop();
  return Object.keys(env)
    .filter((name) => env[name] === KEY || (token !== undefined && env[name] === token))
    .sort();
}

/** Where the family's config points its own provider `id` (pi's models.json, opencode's opencode.json). */
const vendorBase = {
  "pi-cli": (native: string, id: string) =>
    JSON.parse(readFileSync(join(native, "pi", "models.json"), "utf8")).providers[id]?.baseUrl,
  opencode: (native: string, id: string) =>
    JSON.parse(readFileSync(join(native, "opencode", "opencode.json"), "utf8")).provider?.[id]?.options
      ?.baseURL,
};

describe.each([
  ["pi-cli", (o: { bin: string }) => new PiCliFactory(o)],
  ["opencode", (o: { bin: string }) => new OpencodeFactory(o)],
] as const)("%s without a base_url", (family, makeFactory) => {
  it("gives the CLI the credential proxy's token, never the key, and points its vendor's provider at the proxy", async () => {
    for (const [api, id, path] of [
      ["anthropic", "anthropic", family === "opencode" ? "/v1" : ""],
      ["openai", "openai", ""],
    ] as const) {
      const { env, native } = await started(makeFactory, { api, api_key: KEY });
      expect(Object.values(env)).not.toContain(KEY);
      const proxy = env[PROXY_VARIABLE];
      expect(proxy).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+$/);
      expect(env[api === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY"]).toBe(proxy!.split("/").pop());
      expect(vendorBase[family](native, id)).toBe(`${proxy}${path}`);
    }
  });

  it("puts an Anthropic provider's key in ANTHROPIC_API_KEY only", async () => {
    expect(await keyVariables(makeFactory, { api: "anthropic", api_key: KEY })).toEqual([
      "ANTHROPIC_API_KEY",
    ]);
  });

  it("puts an OpenAI provider's key in OPENAI_API_KEY only", async () => {
    expect(await keyVariables(makeFactory, { api: "openai", api_key: KEY })).toEqual(["OPENAI_API_KEY"]);
  });

  it("refuses the key of a provider that names no api, before the program starts", async () => {
    const { out, bin, options } = standIn({ api_key: KEY });
    await expect(makeFactory({ bin }).open(options)).rejects.toThrow(
      /gives a key but neither "api" nor "base_url".*set the provider's api/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it("runs a provider that names no api and gives no key (a local login)", async () => {
    expect(await keyVariables(makeFactory, {})).toEqual([]);
  });
});

const preset = (name: string) => (o: { bin: string }) =>
  new AcpFactory(presetDescriptor(PRESETS.find((p) => p.name === name)!), o);

describe.each([
  ["claude-code", (o: { bin: string }) => new ClaudeCodeFactory(o), "anthropic"],
  ["codex", (o: { bin: string }) => new CodexFactory(o), "openai"],
  ["acp:claude", preset("claude"), "anthropic"],
  ["acp:codex", preset("codex"), "openai"],
  ["acp:gemini", preset("gemini"), "gemini"],
] as const)("%s, which speaks to one vendor", (_family, makeFactory, api) => {
  it("refuses a key whose provider names neither api nor base_url, before the program starts", async () => {
    const { out, bin, options } = standIn({ api_key: KEY });
    await expect(makeFactory({ bin }).open(options)).rejects.toThrow(
      /gives a key but neither "api" nor "base_url".*set the provider's api/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it("opens with a key whose provider names its vendor, or its endpoint", async () => {
    for (const provider of [
      { api, api_key: KEY },
      { base_url: "http://127.0.0.1:9/v1", api_key: KEY },
    ]) {
      const { bin, options } = standIn(provider);
      const harness = await makeFactory({ bin }).open(options);
      await harness.close();
    }
  });
});
