// Tool round trips per second through an MCP server on stdio (@modelcontextprotocol/server-everything's `echo`),
// as Brain makes them: the session's bound tools (argument check against the tool's schema) → the MCP tool
// service → the official MCP client → the server's process and back. Baseline: a raw JSON-RPC echo over a pipe
// (a child process that answers each request line at once): the floor any stdio tool call stands on.
// Context: the official MCP client calling the same server directly, without Brain's layers.
import type { ChildProcess } from "node:child_process";
import { setMaxListeners } from "node:events";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { encodeLine, LineSplitter } from "../src/protocol/ndjson.js";
import { McpSessionServers } from "../src/tools/mcp/index.js";
import { EVERYTHING_ENTRY } from "../src/tools/mcp/testing/servers.js";
import { ToolRouter } from "../src/tools/router.js";
import { LIKE_BRAIN_RUNNER, makeTemp, removeTemp, spawnTracked } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, rateRow, type Sample, timed } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";

const WARM = 50;
const SERVER = "everything";
const TOOL = `${SERVER}__echo`;

/** A child that answers every JSON-RPC request line with an echo result, at once. */
const RAW_ECHO = `
let buf = "";
process.stdin.on("data", (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    const req = JSON.parse(line);
    const text = "Echo: " + req.params.arguments.message;
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: { content: [{ type: "text", text }] } }) + "\\n");
  }
});`;

class RawPipe {
  private readonly child: ChildProcess;
  private readonly waits = new Map<number, () => void>();
  private nextId = 1;

  constructor() {
    this.child = spawnTracked(process.execPath, ["-e", RAW_ECHO], {
      ...LIKE_BRAIN_RUNNER,
      stdio: ["pipe", "pipe", "inherit"],
    });
    const splitter = new LineSplitter((line) => {
      const reply = JSON.parse(line) as { id: number };
      this.waits.get(reply.id)?.();
      this.waits.delete(reply.id);
    });
    this.child.stdout!.on("data", (chunk: Buffer) => splitter.push(chunk));
  }

  call(message: string): Promise<void> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waits.set(id, resolve);
      const request = {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "echo", arguments: { message } },
      };
      this.child.stdin!.write(encodeLine(request));
    });
  }

  close(): void {
    this.child.kill("SIGKILL");
  }
}

/** Runs `calls` calls, `inFlight` at a time; resolves with calls per second. */
async function rate(calls: number, inFlight: number, call: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < calls) await call(next++);
    }),
  );
  return calls / (Number(process.hrtime.bigint() - t0) / 1e9);
}

async function measure(
  calls: number,
  inFlight: number,
  call: (i: number) => Promise<unknown>,
): Promise<Sample> {
  await rate(WARM, inFlight, call);
  const { foreign, result } = await timed(() => rate(calls, inFlight, call));
  return { value: result, foreign };
}

async function roundTrips(opts: BenchOptions, inFlight: number, calls: number): Promise<BenchRow[]> {
  log(`mcp-tools: ${calls} echo round trips, ${inFlight} in flight, ${opts.reps} rounds`);

  const raw = async (): Promise<Sample> => {
    const pipe = new RawPipe();
    try {
      return await measure(calls, inFlight, (i) => pipe.call(`m${i}`));
    } finally {
      pipe.close();
    }
  };

  const client = async (): Promise<Sample> => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [EVERYTHING_ENTRY, "stdio"],
      env: getDefaultEnvironment(),
      stderr: "ignore",
    });
    const mcp = new Client({ name: "bench", version: "0" });
    await mcp.connect(transport);
    try {
      return await measure(calls, inFlight, (i) =>
        mcp.callTool({ name: "echo", arguments: { message: `m${i}` } }),
      );
    } finally {
      await mcp.close();
    }
  };

  const brain = async (): Promise<Sample> => {
    const dir = await makeTemp("mcp-tools");
    const servers = new McpSessionServers(
      { [SERVER]: { command: process.execPath, args: [EVERYTHING_ENTRY, "stdio"] } },
      { baseDir: dir, env: {} },
    );
    try {
      const services = await servers.start(() => {});
      const bound = await (await new ToolRouter([]).bind([])).including(services);
      if (!bound.has(TOOL)) throw new Error(`mcp-tools: ${TOOL} is not offered; did the server start?`);
      // One signal for every call, as a turn's is shared by its tool calls (the session lifts the same limit).
      const signal = new AbortController().signal;
      setMaxListeners(0, signal);
      const call = async (i: number) => {
        const result = await bound.call({ id: `c${i}`, name: TOOL, arguments: { message: `m${i}` } }, signal);
        if (result.is_error) throw new Error(`mcp-tools: a call failed: ${result.content[0]?.text}`);
      };
      return await measure(calls, inFlight, call);
    } finally {
      await servers.close();
      await removeTemp(dir);
    }
  };

  const samples = await interleave(`mcp×${inFlight}`, opts.reps, { raw, client, brain });
  const mode = inFlight === 1 ? "sequential" : `${inFlight} in flight`;
  const notes = [
    `${calls} calls of server-everything's echo per run, after ${WARM} warm-up calls; server start not timed`,
  ];
  return [
    rateRow(
      {
        id: `mcp-rt-${inFlight}`,
        what: `MCP tool round trip over stdio, ${mode} (bound tools → MCP service → server)`,
        unit: "RT/s",
        baselineWhat: "raw JSON-RPC echo: a child answering each request line at once, over a pipe",
        notes,
      },
      { subject: samples.brain, baseline: samples.raw },
      { kind: "none" },
    ),
    rateRow(
      {
        id: `mcp-rt-${inFlight}-client`,
        what: `MCP tool round trip, ${mode}: Brain vs the official client alone (context)`,
        unit: "RT/s",
        baselineWhat: "the official MCP client calling server-everything directly",
        notes: [
          "context: the difference is Brain's layer (schema check, result conversion, restart bookkeeping)",
        ],
      },
      { subject: samples.brain, baseline: samples.client },
      { kind: "none" },
    ),
  ];
}

export async function mcpToolsBench(opts: BenchOptions): Promise<BenchRow[]> {
  return [
    ...(await roundTrips(opts, 1, opts.quick ? 500 : 2_000)),
    ...(await roundTrips(opts, 8, opts.quick ? 2_000 : 8_000)),
  ];
}
