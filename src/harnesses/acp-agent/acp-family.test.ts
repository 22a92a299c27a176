// The acp family without an agent (session/update mapping on notifications captured from the three agents, the
// MCP server list, the config block), and, on codex-acp for real, what every ACP agent gets the same way: the
// session's MCP servers in session/new, and an agent named by command line in brain.config.json.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` references are what the MCP test is about
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { BrainConfig } from "../../protocol/config.js";
import { events, makeBrain, tempDir, textOf } from "../../testing/brain.js";
import { cliBed } from "../../testing/cli.js";
import { mcpSessionTools } from "../../tools/mcp/session-servers.js";
import { everythingStdio } from "../../tools/mcp/testing/servers.js";
import { builtinCatalog, catalogConfigSchema, catalogHarnesses } from "../catalog.js";
import { transcriptPath } from "../claude-code/transcripts.js";
import { locateCli } from "../cli/locate.js";
import { placeGeminiChat } from "./gemini-chats.js";
import { acpMcpServers, policyUse } from "./mcp-servers.js";
import { PRESETS } from "./presets.js";
import { AcpUpdateMapper } from "./updates.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const update = (u: Record<string, unknown>) => u;

describe("session/update as Brain events", () => {
  it("claude-agent-acp: a call announced with empty input is logged once its input is known", () => {
    const m = new AcpUpdateMapper();
    const meta = { claudeCode: { toolName: "Bash" } };
    const out = [
      ...m.handle(
        update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Let me look." } }),
      ),
      ...m.handle(
        update({
          sessionUpdate: "tool_call",
          toolCallId: "t1",
          kind: "execute",
          status: "pending",
          rawInput: {},
          _meta: meta,
        }),
      ),
      ...m.handle(
        update({
          sessionUpdate: "tool_call_update",
          toolCallId: "t1",
          kind: "execute",
          rawInput: { command: "ls -1" },
          _meta: meta,
        }),
      ),
      ...m.handle(
        update({
          sessionUpdate: "tool_call_update",
          toolCallId: "t1",
          status: "completed",
          rawOutput: "marker.txt",
          content: [{ type: "content", content: { type: "text", text: "```console\nmarker.txt\n```" } }],
          _meta: meta,
        }),
      ),
      ...m.handle(update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } })),
      ...m.handle(update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } })),
      ...m.end("end_turn", {
        stopReason: "end_turn",
        usage: { inputTokens: 10, outputTokens: 2, cachedReadTokens: 1 },
      }),
    ];
    expect(out).toEqual([
      { type: "assistant.delta", data: { text: "Let me look." } },
      { type: "assistant.message", data: { text: "Let me look." } },
      { type: "tool.call", data: { id: "t1", name: "Bash", arguments: { command: "ls -1" } } },
      {
        type: "tool.result",
        data: { id: "t1", content: [{ type: "text", text: "marker.txt" }], is_error: false },
      },
      { type: "assistant.delta", data: { text: "done" } },
      { type: "assistant.message", data: { text: "done", usage: { input: 10, output: 2, cache_read: 1 } } },
    ]);
  });

  it("codex-acp: a command is exec_command whatever kind it is given; a denied one ends with an error result", () => {
    const codex = PRESETS.find((p) => p.name === "codex")!.profile;
    const m = new AcpUpdateMapper(codex);
    const started = m.handle(
      update({
        sessionUpdate: "tool_call",
        toolCallId: "c1",
        kind: "search",
        status: "in_progress",
        rawInput: { command: ["/bin/bash", "-lc", "ls -1"] },
      }),
    );
    expect(started).toEqual([
      {
        type: "tool.call",
        data: { id: "c1", name: "exec_command", arguments: { command: ["/bin/bash", "-lc", "ls -1"] } },
      },
    ]);
    const asked = m.toolFor({ toolCallId: "c2", kind: "execute", rawInput: { command: ["touch", "x"] } });
    expect(asked.use).toMatchObject({ name: "exec_command", arguments: { command: ["touch", "x"] } });
    expect(asked.events.map((e) => e.type)).toEqual(["tool.call"]);
    const ended = m.end("cancelled", { stopReason: "cancelled" });
    expect(ended).toEqual([
      {
        type: "tool.result",
        data: {
          id: "c1",
          content: [{ type: "text", text: "the agent's turn ended (cancelled)" }],
          is_error: true,
        },
      },
      {
        type: "tool.result",
        data: {
          id: "c2",
          content: [{ type: "text", text: "the agent's turn ended (cancelled)" }],
          is_error: true,
        },
      },
    ]);
  });

  it("claude-agent-acp: a permission request that comes before its call's update names its tool, not its kind", () => {
    const claude = PRESETS.find((p) => p.name === "claude")!.profile;
    // The request has no _meta: only the kind and the title, which for kind "other" is the tool's own name.
    const asked = new AcpUpdateMapper(claude).toolFor({
      toolCallId: "t1",
      kind: "other",
      title: "mcp__fx__env",
      rawInput: { name: "PATH" },
    });
    expect(asked.use).toMatchObject({ name: "mcp__fx__env", arguments: { name: "PATH" } });
    // Kinds it gives to one tool are that tool, whatever the title (a command, a path) says.
    const named = (kind: string, title: string) =>
      new AcpUpdateMapper(claude).toolFor({ toolCallId: "t2", kind, title }).use.name;
    expect(named("execute", "Read")).toBe("Bash");
    expect(named("read", "Read /x")).toBe("Read");
    expect(named("edit", "Write /x")).toBe("Write");
    expect(named("edit", "Edit /Write")).toBe("Edit");
    // Kinds it gives to two tools are told by how it starts the title; anything else stays the kind.
    expect(named("search", 'grep -i "Find"')).toBe("Grep");
    expect(named("search", "Find `src` `*.ts`")).toBe("Glob");
    expect(named("fetch", "Fetch https://example.com")).toBe("WebFetch");
    expect(named("fetch", '"Fetch news" (allowed: a.example)')).toBe("WebSearch");
    expect(named("search", "Bash")).toBe("search");
    // A Task described as "Update TODOs…" would read as TodoWrite: think is not told apart, by design.
    expect(named("think", "Update TODOs: one")).toBe("think");
  });

  it("codex-acp: an MCP call is mcp__<server>__<tool>, so bound mode knows the endpoint's own", () => {
    const codex = PRESETS.find((p) => p.name === "codex")!.profile;
    const m = new AcpUpdateMapper(codex);
    const rawInput = { server: "brain", tool: "echo", arguments: { value: "hi" } };
    const started = m.handle(
      update({ sessionUpdate: "tool_call", toolCallId: "m1", status: "in_progress", rawInput }),
    );
    expect(started).toMatchObject([{ type: "tool.call", data: { id: "m1", name: "mcp__brain__echo" } }]);
    expect(codex.endpointTool?.("mcp__brain__echo")).toBe(true);
    expect(codex.endpointTool?.("mcp__everything__echo")).toBe(false);
  });

  it("gemini: the name comes from the call id, the command from the title; a failure is an error result", () => {
    const gemini = PRESETS.find((p) => p.name === "gemini")!.profile;
    const m = new AcpUpdateMapper(gemini);
    const id = "run_shell_command__run_shell_command_1796150637469_0";
    const out = [
      ...m.handle(
        update({
          sessionUpdate: "tool_call",
          toolCallId: id,
          kind: "execute",
          status: "in_progress",
          title: "ls -1",
          content: [],
        }),
      ),
      ...m.handle(
        update({
          sessionUpdate: "tool_call_update",
          toolCallId: id,
          status: "failed",
          content: [{ type: "content", content: { type: "text", text: "boom" } }],
        }),
      ),
    ];
    expect(out).toEqual([
      { type: "tool.call", data: { id, name: "run_shell_command", arguments: { command: "ls -1" } } },
      { type: "tool.result", data: { id, content: [{ type: "text", text: "boom" }], is_error: true } },
    ]);
  });
});

describe("claude's transcript before a checkpoint", () => {
  it("counts as written only once it ends, at a record boundary, with the turn's last answer", async () => {
    const claude = PRESETS.find((p) => p.name === "claude")!.profile;
    const dir = tempDir("brain-claude-");
    const cwd = join(dir, "work");
    mkdirSync(cwd);
    const ctx = { family: {} as never, dir, cwd, config: {}, provider: {} };
    const id = "7edfe708-6779-47f6-adb5-fc6d38a166a0";
    const file = transcriptPath(join(dir, "claude"), cwd, id);
    mkdirSync(join(file, ".."), { recursive: true });
    const answer = (text: string) =>
      `${JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text }] } })}\n`;
    writeFileSync(
      file,
      `${answer("done")}${JSON.stringify({ type: "user", message: { content: "NOTOOL" } })}\n`,
    );
    expect(await claude.written!(ctx, id, "hello from fake")).toBe(false);
    appendFileSync(file, answer("hello from fake").slice(0, 20));
    expect(await claude.written!(ctx, id, "hello from fake")).toBe(false);
    appendFileSync(file, answer("hello from fake").slice(20));
    expect(await claude.written!(ctx, id, "hello from fake")).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("gemini chats after a restore", () => {
  it("hands the chat's project to the new cwd and renames it out of a new chat's way", () => {
    const root = tempDir("brain-gemini-");
    const id = "a2700244-85ea-4ca9-b845-9be8790a06d4";
    const chats = join(root, "tmp", "work", "chats");
    mkdirSync(chats, { recursive: true });
    writeFileSync(
      join(chats, "session-2026-12-01T18-50-a2700244.jsonl"),
      `{"sessionId":"${id}"}\n{"type":"user"}\n`,
    );
    writeFileSync(join(root, "tmp", "work", ".project_root"), "/old/work");
    writeFileSync(
      join(root, "projects.json"),
      JSON.stringify({ projects: { "/old/work": "work", "/x": "x" } }),
    );
    expect(placeGeminiChat(root, root, "/new/work", id)).toBe(true);
    expect(readdirSync(chats)).toEqual(["session-brain-a2700244.jsonl"]);
    expect(JSON.parse(readFileSync(join(root, "projects.json"), "utf8"))).toEqual({
      projects: { "/x": "x", "/new/work": "work" },
    });
    expect(readFileSync(join(root, "tmp", "work", ".project_root"), "utf8")).toBe("/new/work");
    expect(placeGeminiChat(root, root, "/new/work", "ffffffff-0000-0000-0000-000000000000")).toBe(false);
    rmSync(root, { recursive: true, force: true });
  });
});

describe("MCP servers for session/new", () => {
  it("judges an agent's call of their tools by the stricter of its name and Brain's, and keeps a server's tools list", () => {
    const servers = { fs: { command: "fs" }, gh: { command: "gh", tools: ["list.issues"] } };
    const policy = (tool: string) =>
      tool === "fs__write_file" ? "deny" : tool === "mcp__fs__read_file" ? "ask" : "allow";
    // claude and codex: mcp__<server>__<tool>; gemini: mcp_<server>_<tool>.
    expect(policyUse("mcp__fs__write_file", servers, policy)).toEqual({ tool: "fs__write_file" });
    expect(policyUse("mcp_fs_write_file", servers, policy)).toEqual({ tool: "fs__write_file" });
    expect(policyUse("mcp__fs__read_file", servers, policy)).toEqual({ tool: "mcp__fs__read_file" });
    expect(policyUse("Bash", servers, policy)).toEqual({ tool: "Bash" });
    expect(policyUse("mcp__gh__list_issues", servers, policy)).toEqual({ tool: "mcp__gh__list_issues" });
    expect(policyUse("mcp__gh__delete_repo", servers, policy)).toEqual({
      tool: "gh__delete_repo",
      refused:
        "mcp__gh__delete_repo is not among the tools mcp_servers.gh.tools offers (list.issues); denied",
    });
  });

  it("fills in ${VAR} from the host, and says what an agent cannot be given or shows every local user", () => {
    const { servers, warnings } = acpMcpServers(
      "acp:x",
      {
        local: { command: "node", args: ["s.js", "--token=${TOK}"], env: { A: "${TOK}" }, cwd: "/srv" },
        remote: { url: "http://127.0.0.1:9/mcp", headers: { authorization: "Bearer ${TOK}" }, tools: ["a"] },
        old: { type: "sse", url: "http://127.0.0.1:9/sse" },
      },
      { TOK: "s3cret" },
    );
    expect(servers).toEqual([
      {
        name: "local",
        command: "node",
        args: ["s.js", "--token=s3cret"],
        env: [{ name: "A", value: "s3cret" }],
      },
      {
        type: "http",
        name: "remote",
        url: "http://127.0.0.1:9/mcp",
        headers: [{ name: "authorization", value: "Bearer s3cret" }],
      },
      { type: "sse", name: "old", url: "http://127.0.0.1:9/sse", headers: [] },
    ]);
    expect(warnings).toEqual([
      "mcp_servers.local.cwd cannot be passed to an ACP agent: the server starts in the agent's directory",
      expect.stringMatching(
        /^mcp_servers\.local\.args\[1\] puts a credential \(--token\) on the command line, .*the "acp:x" agent starts MCP server "local" with it\. Give it to the server in mcp_servers\.local\.env/,
      ),
      "mcp_servers.remote.tools cannot be passed to an ACP agent: it sees all the server's tools",
    ]);
    expect(() => acpMcpServers("acp:x", { s: { command: "${NOPE}" } }, {})).toThrow(
      "acp:x: mcp_servers.s.command uses ${NOPE}, but NOPE is not set",
    );
  });
});

describe("the cli.acp block", () => {
  const schema = catalogConfigSchema(builtinCatalog());

  it("adds agents by command line as acp:<name>, next to the three presets", () => {
    const config = schema.parse({
      cli: { acp: { agents: { mine: { command: "/opt/my-agent --acp --quiet", env: { X: "1" } } } } },
    });
    const setup = { config: config as BrainConfig, configDir: "/", brainHome: "/nonexistent" };
    const { factories } = catalogHarnesses(builtinCatalog(), setup);
    const names = factories.map((f) => f.name).filter((n) => n.startsWith("acp:"));
    expect(names).toEqual(["acp:claude", "acp:codex", "acp:gemini", "acp:mine"]);
  });

  it("refuses tool_mode bound for an agent without a preset: Brain knows no switch for its own tools", async () => {
    const config = schema.parse({ cli: { acp: { agents: { mine: { command: "/bin/sh" } } } } });
    const setup = { config: config as BrainConfig, configDir: "/", brainHome: "/nonexistent" };
    const factory = catalogHarnesses(builtinCatalog(), setup).factories.find((f) => f.name === "acp:mine")!;
    const t = makeBrain({ factories: [factory] });
    try {
      const session = await t.brain.create({ harness: "acp:mine", config: { tool_mode: "bound" } });
      const outcome = await (await session.prompt("hi")).settled;
      expect(outcome.error?.code).toBe("brain_error");
      expect(outcome.error?.message).toMatch(
        /acp:mine: config.tool_mode "bound" is not available for .*: Brain knows no way to turn this ACP agent's own tools off/,
      );
    } finally {
      await t.cleanup();
    }
  });

  it("refuses unknown fields and bad names, naming them", () => {
    const bad = schema.safeParse({
      cli: { acp: { agents: { "Bad Name": { command: "x" } }, colour: "red" } },
    });
    expect(bad.success).toBe(false);
    const text = JSON.stringify(bad.error?.issues);
    expect(text).toContain("colour");
    expect(text).toContain("an ACP agent name is 1 to 32 of a-z, 0-9, '_' or '-'");
  });
});

const codexAcp = locateCli("codex-acp");

describe.runIf(codexAcp)("on codex-acp for real", () => {
  it("describes a preset by its package's version, without starting the agent", async () => {
    const codex = PRESETS.find((p) => p.name === "codex")!;
    const { AcpFactory, presetDescriptor } = await import("./factory.js");
    const described = await new AcpFactory(presetDescriptor(codex)).describe();
    expect(described).toEqual({
      harness: "acp:codex",
      program: "codex-acp",
      path: codexAcp,
      version: "0.16.0",
    });
  });

  const provider = { path: "/v1", model: "gpt-5.4" };

  it("hands the session's MCP servers to the agent in session/new: the model is offered their tools", async () => {
    const codex = PRESETS.find((p) => p.name === "codex")!;
    const { AcpFactory, presetDescriptor } = await import("./factory.js");
    const b = await cliBed((launcher) => new AcpFactory(presetDescriptor(codex), { launcher }), provider, {
      sessionTools: mcpSessionTools({ baseDir: process.cwd() }),
    });
    try {
      const session = await b.create({ mcp_servers: { everything: everythingStdio() } });
      const turn = await session.prompt("NOTOOL hello");
      expect((await turn.settled).status).toBe("completed");
      const sent = b.sandbox.provider.requests.find((r) => Array.isArray(r.body?.tools));
      expect(JSON.stringify(sent?.body.tools)).toContain('"name":"mcp__everything"');
    } finally {
      await b.close();
    }
  });

  it("runs an agent named by command line in cli.acp.agents, with a preset's provider wiring", async () => {
    const pick = (launcher: string[]) => {
      const agents = { mine: { command: [codexAcp!], preset: "codex", title: "My Codex" } };
      const config = catalogConfigSchema(builtinCatalog()).parse({ cli: { acp: { agents, launcher } } });
      const setup = { config: config as BrainConfig, configDir: "/", brainHome: "/nonexistent" };
      return catalogHarnesses(builtinCatalog(), setup).factories.find((f) => f.name === "acp:mine")!;
    };
    const b = await cliBed(pick, provider);
    try {
      const session = await b.create();
      const turn = await session.prompt("NOTOOL hello");
      expect((await turn.settled).status).toBe("completed");
      expect(textOf(await events(session), turn.turn)).toBe("hello from fake");
    } finally {
      await b.close();
    }
  });
});
