// A small MCP server on stdio for the tests: tools that misbehave on purpose (crash mid-call, sleep past a
// timeout, fail, flood Brain with requests while reading nothing, answer with a result that is not MCP's, report
// progress forever, leave a process behind holding its pipes), and ones that report on the process (pid, an
// environment variable). FIXTURE_TOOL_PREFIX, when set, goes before every tool's name (two servers' names can
// then be made to meet).
// Run: node dist/src/tools/mcp/testing/fixture-server.js
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const object = (properties: Record<string, unknown> = {}, required: string[] = []) => ({
  type: "object" as const,
  properties,
  required,
});

const TOOLS = [
  {
    name: "echo",
    description: "Returns `text`.",
    inputSchema: object({ text: { type: "string" } }, ["text"]),
  },
  { name: "pid", description: "This server's process id.", inputSchema: object() },
  {
    name: "env",
    description: "The value of variable `name`.",
    inputSchema: object({ name: { type: "string" } }, ["name"]),
  },
  {
    name: "sleep",
    description: "Answers after `ms` milliseconds.",
    inputSchema: object({ ms: { type: "number" } }, ["ms"]),
  },
  { name: "crash", description: "Exits the server without answering.", inputSchema: object() },
  { name: "fail", description: "Answers with a tool error.", inputSchema: object() },
  { name: "odd.name", description: "A name providers would refuse as is.", inputSchema: object() },
  {
    name: "flood",
    description:
      "Stops reading its input and sends Brain pings, as fast as they go, never reading the answers.",
    inputSchema: object(),
  },
  { name: "malformed", description: "Answers with content that is not a list.", inputSchema: object() },
  {
    name: "unversioned",
    description: "Answers with a message that leaves out `jsonrpc`, as hand-written servers do.",
    inputSchema: object(),
  },
  {
    name: "endless_line",
    description: "Writes 80 MiB with no newline and never answers.",
    inputSchema: object(),
  },
  { name: "progress", description: "Reports progress every 50 ms and never answers.", inputSchema: object() },
  {
    name: "orphan",
    description: "Starts a process that holds this server's pipes and outlives it; answers with its pid.",
    inputSchema: object(),
  },
];

/** Tools whose output schemas Brain must not take at their word: FIXTURE_OUTPUT_SCHEMA names the one offered. */
const OUTPUT_SCHEMA_TOOLS = [
  {
    name: "structured",
    description: "Answers {a: `a`}, under a schema whose pattern backtracks without end on a's and a '!'.",
    inputSchema: object({ a: { type: "string" } }, ["a"]),
    outputSchema: object({ a: { type: "string", pattern: "^(a+)+$" } }),
  },
  {
    name: "unchecked",
    description: "Its output schema does not compile.",
    inputSchema: object(),
    outputSchema: object({ a: { type: "no such type" } }),
  },
];
// FIXTURE_GROW: offers grow, which adds a tool and says so (notifications/tools/list_changed).
if (process.env.FIXTURE_GROW)
  TOOLS.push({
    name: "grow",
    description: "Adds the tool grown; says the tools changed.",
    inputSchema: object(),
  });
TOOLS.push(...OUTPUT_SCHEMA_TOOLS.filter((tool) => tool.name === process.env.FIXTURE_OUTPUT_SCHEMA));

const server = new Server(
  { name: "brain-fixture", version: "1.0.0" },
  { capabilities: { tools: { listChanged: true } } },
);
// FIXTURE_TOOL_PREFIX_FILE: the prefix is read from this file at each start (a restart can offer other names).
const prefixFile = process.env.FIXTURE_TOOL_PREFIX_FILE;
const prefix = prefixFile ? readFileSync(prefixFile, "utf8") : (process.env.FIXTURE_TOOL_PREFIX ?? "");
// FIXTURE_PAGES: "same" gives every page the same next cursor, "endless" a new one each time (paging bugs).
const paging = process.env.FIXTURE_PAGES;
// FIXTURE_EXIT_AFTER_LIST: exits that many ms after it lists its tools (a server that dies soon after each start).
const exitAfterList = process.env.FIXTURE_EXIT_AFTER_LIST;
server.setRequestHandler(ListToolsRequestSchema, async (request) => {
  // FIXTURE_GROW=hang: once grown, listing the tools never answers (a server stuck relisting).
  if (process.env.FIXTURE_GROW === "hang" && TOOLS.some((tool) => tool.name === "grown"))
    return new Promise<never>(() => {});
  if (exitAfterList !== undefined) setTimeout(() => process.exit(3), Number(exitAfterList));
  const page = Number(request.params?.cursor ?? 0);
  const nextCursor = paging === "same" ? "again" : paging === "endless" ? String(page + 1) : undefined;
  const tools = TOOLS.map((tool) => ({ ...tool, name: `${prefix}${tool.name}${paging ? `_${page}` : ""}` }));
  return { tools, ...(nextCursor ? { nextCursor } : {}) };
});
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const name = request.params.name.startsWith(prefix) ? request.params.name.slice(prefix.length) : "";
  const args = (request.params.arguments ?? {}) as Record<string, unknown>;
  const text = (value: string, isError = false) => ({ content: [{ type: "text", text: value }], isError });
  switch (name) {
    case "echo":
      return text(String(args.text));
    case "pid":
      return text(String(process.pid));
    case "env":
      return text(process.env[String(args.name)] ?? "(unset)");
    case "sleep":
      await new Promise((resolve) => setTimeout(resolve, Number(args.ms)));
      return text("slept");
    case "crash":
      process.stderr.write("fixture: crashing on purpose\n");
      process.exit(7);
      break;
    case "fail":
      return text("this tool always fails", true);
    case "odd.name":
      return text("odd");
    case "grow":
      // A new tool, announced before the answer: the client has the notification when the call returns.
      if (!TOOLS.some((tool) => tool.name === "grown"))
        TOOLS.push({ name: "grown", description: "Offered after grow.", inputSchema: object() });
      await server.sendToolListChanged();
      return text("grew");
    case "grown":
      return text("grown");
    case "structured":
      return { content: [], structuredContent: { a: String(args.a) } };
    case "unchecked":
      return { content: [], structuredContent: { a: 1 } };
    case "flood":
      flood();
      return new Promise<never>(() => {});
    case "endless_line": {
      // Past the longest line Brain reads (64 MiB), with no newline: 1 MiB a write, as the pipe takes it.
      const mib = Buffer.alloc(1 << 20, "x");
      const write = (left: number): unknown => left > 0 && process.stdout.write(mib, () => write(left - 1));
      write(80);
      return new Promise<never>(() => {});
    }
    case "malformed":
      // Written by hand: the SDK's server would not send it.
      writeLine({ jsonrpc: "2.0", id: extra.requestId, result: { content: "not a list" } });
      return new Promise<never>(() => {});
    case "unversioned":
      writeLine({ id: extra.requestId, result: text("no jsonrpc field") });
      return new Promise<never>(() => {});
    case "orphan": {
      const orphan = spawn(process.execPath, ["-e", "setInterval(() => {}, 1e9)"], { stdio: "inherit" });
      orphan.unref();
      return text(String(orphan.pid));
    }
    case "progress": {
      const progressToken = request.params._meta?.progressToken;
      if (progressToken === undefined) return text("no progress token: nothing to report to", true);
      let progress = 0;
      const report = setInterval(() => {
        const params = { progressToken, progress: ++progress };
        extra
          .sendNotification({ method: "notifications/progress", params })
          .catch(() => clearInterval(report));
      }, 50);
      extra.signal.addEventListener("abort", () => clearInterval(report));
      return new Promise<never>(() => {});
    }
  }
  return text(`unknown tool ${request.params.name}`, true);
});

function writeLine(message: unknown): boolean {
  return process.stdout.write(`${JSON.stringify(message)}\n`);
}

function flood(): void {
  process.stdin.pause();
  let n = 0;
  const more = () => {
    while (writeLine({ jsonrpc: "2.0", id: `flood-${n++}`, method: "ping" })) {}
    process.stdout.once("drain", more);
  };
  more();
}

await server.connect(new StdioServerTransport());
