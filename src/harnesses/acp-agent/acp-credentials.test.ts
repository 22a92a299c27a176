// The ACP presets never hold the provider's key: claude-agent-acp, codex-acp and gemini get the session's
// credential proxy's URL and token (../cli/credential-proxy.ts), as the CLI families do, unless the `cli.acp`
// block opts a preset out. The program is a stand-in that writes down its environment and exits; the real agents' round trip
// through the proxy is in acp-claude.test.ts, acp-codex.test.ts and acp-gemini.test.ts.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { BrainConfig } from "../../protocol/config.js";
import type { ProviderCredentials } from "../../protocol/runner.js";
import { tempDir } from "../../testing/brain.js";
import { bareHarnessOptions } from "../../testing/cli.js";
import { builtinCatalog, catalogConfigSchema, catalogHarnesses } from "../catalog.js";
import { PROXY_VARIABLE } from "../cli/proxy-variable.js";

const KEY = "sk-acp-credentials-test-0123456789";
const PROVIDER: ProviderCredentials = { base_url: "http://127.0.0.1:9/v1", api_key: KEY };
const PROXIED = /^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+$/;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * The environment `harness` was started with, its program a stand-in, `acp` in the `cli.acp` block and `mine` in
 * its agent `acp:mine` (the gemini preset by command line).
 */
async function started(
  harness: string,
  acp: Record<string, unknown> = {},
  mine: Record<string, unknown> = {},
): Promise<Record<string, string>> {
  const dir = tempDir("brain-acp-credentials-");
  dirs.push(dir);
  const out = join(dir, "env.json");
  const bin = join(dir, "agent");
  const record = `require("node:fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.env));`;
  writeFileSync(bin, `#!/usr/bin/env node\n${record}\n`, { mode: 0o755 });
  const agents = { mine: { command: bin, preset: "gemini", ...mine } };
  const block = { bin: { claude: bin, codex: bin, gemini: bin }, agents, ...acp };
  const config = catalogConfigSchema(builtinCatalog()).parse({ cli: { acp: block } }) as BrainConfig;
  const setup = { config, configDir: "/", brainHome: "/nonexistent" };
  const factory = catalogHarnesses(builtinCatalog(), setup).factories.find((f) => f.name === harness)!;
  const native = join(dir, "native");
  mkdirSync(native);
  const opened = await factory.open(bareHarnessOptions(native, { provider: PROVIDER }));
  // The stand-in exits without answering initialize: the turn fails once it has written its environment.
  const turn = opened.prompt("hello", { turn: "t1", signal: new AbortController().signal });
  await expect(turn).rejects.toThrow();
  await opened.close();
  return JSON.parse(readFileSync(out, "utf8")) as Record<string, string>;
}

describe("the ACP presets' provider key", () => {
  it("is not in claude-agent-acp's environment: its base URL is the credential proxy and its key the token", async () => {
    const env = await started("acp:claude");
    expect(Object.values(env)).not.toContain(KEY);
    expect(env[PROXY_VARIABLE]).toMatch(PROXIED);
    expect(env.ANTHROPIC_BASE_URL).toBe(env[PROXY_VARIABLE]);
    expect(env.ANTHROPIC_API_KEY).toBe(env[PROXY_VARIABLE]!.split("/").pop());
  });

  it("is not in gemini's environment: its base URL is the credential proxy and its key the token", async () => {
    for (const harness of ["acp:gemini", "acp:mine"]) {
      const env = await started(harness);
      expect(Object.values(env)).not.toContain(KEY);
      expect(env[PROXY_VARIABLE]).toMatch(PROXIED);
      expect(env.GOOGLE_GEMINI_BASE_URL).toBe(env[PROXY_VARIABLE]);
      expect(env.GEMINI_API_KEY).toBe(env[PROXY_VARIABLE]!.split("/").pop());
    }
  });

  it("is not in codex-acp's environment: its config.toml names the credential proxy, its variable the token", async () => {
    const env = await started("acp:codex");
    expect(Object.values(env)).not.toContain(KEY);
    expect(env[PROXY_VARIABLE]).toMatch(PROXIED);
    expect(env.BRAIN_CODEX_API_KEY).toBe(env[PROXY_VARIABLE]!.split("/").pop());
    const toml = readFileSync(join(env.CODEX_HOME!, "config.toml"), "utf8");
    expect(toml).toContain(`base_url = "${env[PROXY_VARIABLE]}"`);
  });

  it("is the agent's own where cli.acp.credential_proxy opts its preset, or every preset, out", async () => {
    const one = { credential_proxy: { claude: false } };
    expect(await started("acp:claude", one)).toMatchObject({ ANTHROPIC_API_KEY: KEY });
    expect((await started("acp:claude", one))[PROXY_VARIABLE]).toBeUndefined();
    expect((await started("acp:gemini", one)).GEMINI_API_KEY).not.toBe(KEY);
    const all = { credential_proxy: false };
    expect(await started("acp:gemini", all)).toMatchObject({ GEMINI_API_KEY: KEY });
    expect(await started("acp:mine", all)).toMatchObject({ GEMINI_API_KEY: KEY });
    const mine = { credential_proxy: false };
    expect(await started("acp:mine", {}, mine)).toMatchObject({ GEMINI_API_KEY: KEY });
    expect((await started("acp:gemini", {}, mine)).GEMINI_API_KEY).not.toBe(KEY);
  });
});
