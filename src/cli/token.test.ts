// `brain token add`: a token limited to some providers, and the names checked against the config beside it.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../testing/brain.js";
import { useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("token");
const { home } = cli;
const brain = cli.run;

describe("brain token add --providers", () => {
  it("adds a token limited to some providers", () => {
    const { code, out } = brain(["token", "add", "--tenant", "acme", "--providers", "a,b"]);
    expect(code).toBe(0);
    const file = JSON.parse(readFileSync(join(home, "tokens.json"), "utf8"));
    expect(file.tokens.at(-1)).toMatchObject({ token: out.trim(), tenant: "acme", providers: ["a", "b"] });
    expect(brain(["token", "add", "--providers", "a b"]).code).not.toBe(0);
  });

  it("refuses a token for a provider the config beside it does not configure, naming the configured ones", () => {
    const dir = tempDir("brain-cli-providers-");
    writeFileSync(
      join(dir, "brain.config.json"),
      JSON.stringify({ providers: { local: { api: "openai" } } }),
    );
    const refused = brain(["token", "add", "--observer", "--providers", "local,lcoal"], dir);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('--providers names "lcoal", not in');
    expect(refused.err).toContain("(configured: local)");
    const added = brain(["token", "add", "--observer", "--providers", "local"], dir);
    expect(added.code).toBe(0);
    expect(added.err).toContain("added an observer token");
    rmSync(dir, { recursive: true, force: true });
  });
});
