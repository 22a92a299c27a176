// Adding a harness family is a folder plus one line in the catalog: a family from a test folder (parrot), added
// to a catalog passed in, shows up in `brain harnesses`, GET /v1/harnesses, the config's checks and the ADL
// harness types, and its sessions run.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadAgentFile } from "../agents/catalog.js";
import { sessionInput } from "../agents/session-input.js";
import { builtinCatalog } from "../harnesses/catalog.js";
import { events, tempDir, textOf } from "../testing/brain.js";
import { startTestDaemon } from "../testing/daemon.js";
import { parrotFamily } from "../testing/fixtures/families/parrot/descriptor.js";
import { raw } from "../testing/http.js";
import { harnessLines } from "./commands/harnesses.js";
import { ConfigError, loadConfig } from "./config.js";
import { configHarnesses, configHarnessTypes, createBrain } from "./setup.js";

const catalog = [...builtinCatalog(), parrotFamily];
const dir = tempDir("brain-catalog-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The CLI families point nowhere: `brain harnesses` then has no real CLI to ask its version.
const nowhere = Object.fromEntries(
  ["claude-code", "codex", "pi-cli", "opencode"].map((name) => [name, { bin: `/nonexistent/${name}` }]),
);

function configFile(config: unknown): string {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

describe("a family added to the catalog", () => {
  const home = join(dir, "home");
  const loaded = () =>
    loadConfig(configFile({ cli: { ...nowhere, parrot: { greeting: "polly" } } }), dir, catalog);

  it("has its settings checked in brain.config.json, strictly, and only when the catalog has it", () => {
    expect(loaded().config.cli?.parrot).toEqual({ greeting: "polly" });
    expect(() => loadConfig(configFile({ cli: { parrot: { greting: "x" } } }), dir, catalog)).toThrow(
      /unknown field "cli.parrot.greting": the fields here are greeting/,
    );
    const without = () => loadConfig(configFile({ cli: { parrot: {} } }), dir, builtinCatalog());
    expect(without).toThrow(ConfigError);
    expect(without).toThrow(/unknown field "cli.parrot": the fields here are claude-code, codex/);
  });

  it("is listed by brain harnesses", async () => {
    const lines = await harnessLines(loaded(), home, catalog);
    expect(lines).toContain("parrot");
    expect(lines).toContainEqual(expect.stringMatching(/^codex +\/nonexistent\/codex not found$/));
  });

  it("is listed by GET /v1/harnesses", async () => {
    const t = await startTestDaemon({ factories: configHarnesses(loaded(), home, catalog).factories });
    try {
      const { status, body } = await raw(t.url, "GET", "/v1/harnesses", { token: t.tokens.admin });
      expect(status).toBe(200);
      expect(body.harnesses).toContainEqual({ name: "parrot", steering: false, images: false });
    } finally {
      await t.cleanup();
    }
  });

  it("is an ADL harness.type, with the fields it needs checked, and its sessions run", async () => {
    const agents = join(dir, "agents");
    mkdirSync(agents, { recursive: true });
    const file = join(agents, "parrot.yaml");
    writeFileSync(file, 'adl: "1.0"\nname: Polly\nharness:\n  type: parrot\n  model: polly\n');
    const types = configHarnessTypes(loaded(), home, catalog);
    const agent = loadAgentFile(file, types);
    expect(agent.definition.harness.type).toBe("parrot");

    const builtin = configHarnessTypes(loaded(), home, builtinCatalog());
    expect(() => loadAgentFile(file, builtin)).toThrow(
      /harness.type: unknown harness type "parrot"; this host runs/,
    );
    const modelless = join(agents, "modelless.yaml");
    writeFileSync(modelless, 'adl: "1.0"\nname: Mute\nharness:\n  type: parrot\n');
    expect(() => loadAgentFile(modelless, types)).toThrow(
      /harness.model: required for harness.type parrot; any model name/,
    );

    const brain = createBrain(loaded(), join(dir, "brain-home"), { catalog });
    try {
      const session = await brain.create(sessionInput(agent));
      const turn = await session.prompt("hello");
      expect((await turn.settled).status).toBe("completed");
      expect(textOf(await events(session), turn.turn)).toBe("polly: hello");
    } finally {
      await brain.close();
    }
  });
});

describe("brain harnesses", () => {
  it("asks a CLI its version once, and again only when its program file changes", async () => {
    const bin = join(dir, "fake-codex");
    const asked = join(dir, "asked");
    writeFileSync(bin, `#!/bin/sh\necho x >> ${asked}\necho "codex-cli 1.2.3"\n`);
    chmodSync(bin, 0o755);
    const loaded = loadConfig(configFile({ cli: { ...nowhere, codex: { bin } } }), dir);
    const home = join(dir, "cache-home");
    const times = () => (existsSync(asked) ? readFileSync(asked, "utf8").split("\n").length - 1 : 0);
    const line = expect.stringMatching(new RegExp(`^codex +${bin} 1\\.2\\.3  ${bin}$`));

    expect(await harnessLines(loaded, home)).toContainEqual(line);
    expect(times()).toBe(1);
    expect(await harnessLines(loaded, home)).toContainEqual(line);
    expect(times()).toBe(1);
    utimesSync(bin, new Date(), new Date(Date.now() + 5_000));
    expect(await harnessLines(loaded, home)).toContainEqual(line);
    expect(times()).toBe(2);
  });
});
