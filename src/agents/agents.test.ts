// Agent definitions (nui's ADL): files in nui's format load unchanged and map onto sessions; every mistake is
// named with its file, its field and the fix; `brain agents` and `brain run --agent` end to end.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listExtensions } from "../harnesses/ext/extensions.js";
import { installExtension } from "../harnesses/ext/install.js";
import { tempDir } from "../testing/brain.js";
import { fixtures, root, type Served, startSeedHarness } from "../testing/nui.js";
import { listAgents, loadAgentFile, resolveAgent } from "./catalog.js";
import { sessionInput } from "./session-input.js";

/** These tests start several brain processes; on a busy machine each takes seconds to load. */
const CLI_TIMEOUT_MS = 120_000;

const agentsDir = join(fixtures, "agents");
const dirs: string[] = [];
const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function scratch(): string {
  const dir = tempDir("brain-agents-");
  dirs.push(dir);
  return dir;
}

/** Writes `text` as an agent file and loads it. */
function load(text: string, name = "agent.yaml") {
  const file = join(scratch(), name);
  writeFileSync(file, text);
  return () => loadAgentFile(file);
}

describe("nui's format", () => {
  it("maps each harness type onto a session: harness, model, prompt, options, provider, permissions", () => {
    const api = sessionInput(loadAgentFile(join(agentsDir, "api-writer.yaml")), { workingDir: "/work" });
    expect(api).toEqual({
      harness: "api",
      config: {
        model: "claude-sonnet-4-20250514",
        system_prompt: "You write short, precise technical prose.",
        options: { agent: "api-writer", working_dir: "/work", provider: "anthropic" },
      },
      provider: { api: "anthropic", api_key_env: "ANTHROPIC_API_KEY" },
    });
    const remote = loadAgentFile(join(agentsDir, "remote-echo.yaml"));
    expect(remote.ignored).toEqual(["steps"]);
    expect(sessionInput(remote)).toEqual({
      harness: "remote",
      config: {
        options: { agent: "remote-echo", env: { SHARED: "2", PORT: "8080" }, host: "127.0.0.1", port: 9090 },
      },
      permissions: { default: "ask", tools: { read_file: "allow", "mcp__*": "allow" } },
    });
    const docker = loadAgentFile(join(agentsDir, "container-runner.json"));
    expect(docker.id).toBe("container-runner"); // no id: the file's name
    expect(sessionInput(docker).config?.options).toMatchObject({
      image: "code-runner:latest",
      containerPort: 9090,
      mcp_servers: [
        { name: "files", command: "npx", args: ["-y", "some-mcp-package"], type: "stdio" },
        { name: "search", url: "http://localhost:9123/mcp", type: "http" },
      ],
    });
    const sandboxed = loadAgentFile(join(agentsDir, "sandboxed.yaml"));
    expect(sandboxed.ignored).toEqual(["hitl"]);
    expect(sessionInput(sandboxed)).toMatchObject({
      harness: "devcontainer",
      config: { options: { innerHarness: "claude-code" } },
    });
    // What a devcontainer's errors tell its author to set (harness.remoteUser, .network) reaches the session.
    const file = join(scratch(), "devc.yaml");
    writeFileSync(
      file,
      "adl: '1.0'\nid: devc\nname: D\nharness:\n  type: devcontainer\n  innerHarness: pi\n  remoteUser: node\n  network: bridge\n  lifecycleTimeout: 60\n",
    );
    const devc = loadAgentFile(file);
    expect(devc.ignored).toEqual([]);
    expect(sessionInput(devc).config?.options).toMatchObject({
      remoteUser: "node",
      network: "bridge",
      lifecycleTimeout: 60,
    });
    expect(sessionInput(loadAgentFile(join(agentsDir, "ext-echo.yaml")))).toMatchObject({
      harness: "ext:demo-py/echo",
      permissions: { default: "allow", tools: { Bash: "ask", Write: "ask" } },
    });
  });

  it("reads an extension's agents as ext:<extension>/<id>, without adl:", async () => {
    const home = scratch();
    await installExtension(join(fixtures, "extensions/demo-py"), join(home, "extensions"));
    const { agents, problems } = listAgents(agentsDir, listExtensions(join(home, "extensions")).extensions);
    expect(problems).toEqual([]);
    expect(agents.map((a) => a.id)).toEqual([
      "api-writer",
      "container-runner",
      "ext-echo",
      "remote-echo",
      "sandboxed",
      "ext:demo-py/echo-agent",
    ]);
    expect(
      resolveAgent("ext:demo-py/echo-agent", agentsDir, listExtensions(join(home, "extensions")).extensions)
        .definition.harness.type,
    ).toBe("ext:demo-py/echo");
  });
});

describe("mistakes are named with the file, the field and the fix", () => {
  it.each([
    ["no adl", "name: x\nharness: {type: pi}\n", /agent\.yaml: adl: required; write adl: "1\.0" at the top/],
    ["a future adl", 'adl: "2.0"\nname: x\nharness: {type: pi}\n', /adl: version "2\.0" is not supported/],
    ["no name", 'adl: "1.0"\nharness: {type: pi}\n', /name: required; give the agent a name/],
    ["no harness", 'adl: "1.0"\nname: x\n', /harness: required; say how it runs/],
    [
      "a misspelt field",
      'adl: "1.0"\nname: x\nsystemPromt: hi\nharness: {type: pi}\n',
      /systemPromt: unknown field; did you mean "systemPrompt"\?/,
    ],
    [
      "a misspelt harness field",
      'adl: "1.0"\nname: x\nharness: {type: remote, hots: h, port: 1}\n',
      /harness\.hots: unknown field; did you mean "host"\?/,
    ],
    [
      "docker without its port",
      'adl: "1.0"\nname: x\nharness: {type: docker, image: i}\n',
      /harness\.containerPort: required for harness\.type docker; the port it listens on/,
    ],
    [
      "remote without host and port",
      'adl: "1.0"\nname: x\nharness: {type: remote}\n',
      /harness\.host: required for harness\.type remote.*harness\.port: required/,
    ],
    [
      "api without provider",
      'adl: "1.0"\nname: x\nharness: {type: api}\n',
      /harness\.provider: required for harness\.type api; one of anthropic, openai, gemini, openrouter, ollama/,
    ],
    [
      "an unknown provider",
      'adl: "1.0"\nname: x\nharness: {type: api, provider: acme}\n',
      /harness\.provider: Invalid option.*one of anthropic/,
    ],
    [
      "devcontainer without innerHarness",
      'adl: "1.0"\nname: x\nharness: {type: devcontainer}\n',
      /harness\.innerHarness: required for harness\.type devcontainer/,
    ],
    [
      "a port that is no port",
      'adl: "1.0"\nname: x\nharness: {type: remote, host: h, port: 99999}\n',
      /harness\.port: Too big.*the port the agent listens on/,
    ],
    [
      "an ext ref without its harness id",
      'adl: "1.0"\nname: x\nharness: {type: "ext:corp"}\n',
      /harness\.type: "ext:corp" is not ext:<extension>\/<harness-id>/,
    ],
    [
      "an allowlist without tools",
      'adl: "1.0"\nname: x\nharness: {type: pi}\ntoolApprovals: {policy: allowlist}\n',
      /toolApprovals\.tools: required when policy is allowlist/,
    ],
    [
      "an unknown policy",
      'adl: "1.0"\nname: x\nharness: {type: pi}\ntoolApprovals: {policy: some}\n',
      /toolApprovals\.policy: .*one of default, all, allowlist, denylist/,
    ],
    [
      "an MCP server with no source",
      'adl: "1.0"\nname: x\nharness: {type: pi}\naiAssets: {mcpServers: [{name: m}]}\n',
      /aiAssets\.mcpServers\.0: needs url \(http\/sse\), command \(stdio\) or ref/,
    ],
    [
      "a base URL with a password, which Brain would show",
      'adl: "1.0"\nname: x\nharness: {type: api, provider: openai, baseUrl: "http://u:pw-0123456789@h:1/v1"}\n',
      /harness\.baseUrl: holds a user name or password(?!.*pw-0123456789)/,
    ],
    [
      "a bad variable name",
      'adl: "1.0"\nname: x\nharness: {type: pi}\nenv: {"1X": a}\n',
      /env\.1X: not a valid variable name/,
    ],
    ["YAML that does not parse", 'adl: "1.0"\nname: [x\n', /agent\.yaml: not valid YAML\/JSON/],
  ])("%s", (_what, text, message) => {
    expect(load(text)).toThrow(message);
  });

  it("a file that is no agent definition, a missing file, an unknown id, a duplicate id", () => {
    expect(load("adl: x", "agent.txt")).toThrow(/an agent definition is a \.yaml, \.yml or \.json file/);
    expect(() => loadAgentFile("/no/such.yaml")).toThrow(/no such agent definition file/);
    expect(() => resolveAgent("nobody", agentsDir, [])).toThrow(
      /no agent "nobody" in .*; known agents: api-writer, container-runner/,
    );
    // A broken agent's problem is given for its own id only, not for an id its text holds.
    const near = scratch();
    writeFileSync(join(near, "deploy-prod.yaml"), 'adl: "1.0"\nname: d\nharness: {type: pi}\nmodle: x\n');
    expect(() => resolveAgent("deploy", near, [])).toThrow(/no agent "deploy" in .*; known agents: \(none\)/);
    expect(() => resolveAgent("deploy-prod", near, [])).toThrow(/deploy-prod\.yaml: modle: unknown field/);
    const dir = scratch();
    cpSync(join(agentsDir, "sandboxed.yaml"), join(dir, "a.yaml"));
    cpSync(join(agentsDir, "sandboxed.yaml"), join(dir, "b.yaml"));
    expect(listAgents(dir).problems).toEqual([
      expect.stringMatching(/b\.yaml: id "sandboxed" is already defined in .*a\.yaml/),
    ]);
  });
});

describe("brain agents and brain run --agent", () => {
  function brain(home: string, ...args: string[]) {
    const r = spawnSync(process.execPath, [join(root, "bin/brain.js"), ...args], {
      env: { ...process.env, BRAIN_HOME: home },
      encoding: "utf8",
      input: "",
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  }

  async function seed(): Promise<Served> {
    const agent = await startSeedHarness();
    stops.push(() => agent.stop());
    return agent;
  }

  it(
    "lists the agents, runs one by id and by file, and names a broken one",
    async () => {
      const agent = await seed();
      const home = scratch();
      mkdirSync(join(home, "agents"));
      const definition = `adl: "1.0"\nid: seed\nname: Seed echo\ndescription: the seed's Python harness\nharness:\n  type: remote\n  host: 127.0.0.1\n  port: ${agent.port}\n`;
      writeFileSync(join(home, "agents/seed.yaml"), definition);
      const ls = brain(home, "agents", "ls");
      expect(ls.code).toBe(0);
      expect(ls.out).toMatch(/^seed +remote +Seed echo — the seed's Python harness\n$/);
      const byId = brain(home, "run", "--agent", "seed", "hello from ADL");
      expect(byId.code).toBe(0);
      expect(byId.out).toBe("hello from ADL\n");
      const byFile = brain(home, "run", "--agent", join(home, "agents/seed.yaml"), "by file");
      expect(byFile.out).toBe("by file\n");
      writeFileSync(join(home, "agents/broken.yaml"), 'adl: "1.0"\nname: b\nharness: {type: docker}\n');
      const broken = brain(home, "agents", "ls");
      expect(broken.code).toBe(1);
      expect(broken.err).toMatch(
        /invalid: .*broken\.yaml: harness\.image: required for harness\.type docker/,
      );
      const run = brain(home, "run", "--agent", "broken", "x");
      expect(run.code).toBe(2);
      expect(run.err).toMatch(/broken\.yaml: harness\.image: required/);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    "says which extension to install for an ext: agent",
    () => {
      const home = scratch();
      const run = brain(home, "run", "--agent", join(agentsDir, "ext-echo.yaml"), "x");
      expect(run.code).toBe(2);
      expect(run.err).toMatch(/extension "demo-py" is not installed; install it with brain ext install PATH/);
    },
    CLI_TIMEOUT_MS,
  );
});
