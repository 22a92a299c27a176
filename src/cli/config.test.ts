// brain.config.json's provider settings are refused, naming the field and the fix, whenever Brain would later
// show a secret they hold; the refusal never quotes the value.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../testing/brain.js";
import { loadConfig } from "./config.js";

const dir = tempDir("brain-config-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The refusal of `config`, or undefined when it loads. */
function refusal(config: unknown): string | undefined {
  const file = join(dir, "brain.config.json");
  writeFileSync(file, JSON.stringify(config));
  try {
    loadConfig(file, dir);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

describe("limits.forwards_per_tenant", () => {
  it("bounds a tenant's commands waiting on other nodes; a value that is no positive whole number is refused, naming it", () => {
    expect(refusal({ limits: { forwards_per_tenant: 8 } })).toBeUndefined();
    for (const bad of [0, -1, 1.5, "64"]) {
      expect(refusal({ limits: { forwards_per_tenant: bad } })).toMatch(
        /brain\.config\.json: field "limits\.forwards_per_tenant": .*(>0|integer|number)/,
      );
    }
  });
});

describe("a provider's api_key_env", () => {
  it("is refused when it is no variable name (a key pasted there), without quoting it", () => {
    const key = "sk-proj-Pasted-0123456789";
    for (const [config, field] of [
      [{ providers: { p: { api: "openai", api_key_env: key } } }, "providers.p.api_key_env"],
      [{ defaults: { provider: { api: "openai", api_key_env: key } } }, "defaults.provider.api_key_env"],
    ] as const) {
      const message = refusal(config);
      expect(message).toContain(`field "${field}": is not a variable name`);
      expect(message).toMatch(/the name of the environment variable that holds the key/);
      expect(message).not.toContain(key);
    }
  });

  it("loads when it names a variable", () => {
    expect(refusal({ providers: { p: { api: "openai", api_key_env: "OPENAI_API_KEY" } } })).toBeUndefined();
    expect(refusal({ defaults: { provider: { api: "openai", api_key_env: "_MY_KEY2" } } })).toBeUndefined();
  });
});

describe("a runner's command", () => {
  it("is refused when it names no program, saying so, instead of failing the first session on a TypeError", () => {
    for (const command of ["", "   ", [""], [" ", "runner.js"]]) {
      expect(refusal({ harnesses: { r: { command } } })).toMatch(
        /field "harnesses\.r\.command": .*names no program/,
      );
    }
    expect(refusal({ harnesses: { r: { command: ["node", "runner.js"] } } })).toBeUndefined();
  });
});
