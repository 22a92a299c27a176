// Real MCP servers for tests and benchmarks: @modelcontextprotocol/server-everything (from npm) on stdio or
// streamable HTTP, and this project's fixture server (misbehaving tools) on stdio.
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../../core/free-port.js";
import type { McpServer } from "../../../protocol/config.js";

const here = dirname(fileURLToPath(import.meta.url));
/** The project root, from src/tools/mcp/testing or dist/src/tools/mcp/testing. */
const root = resolve(here, here.includes(`${sep}dist${sep}`) ? "../../../../.." : "../../../..");

export const EVERYTHING_ENTRY = join(
  root,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
export const FIXTURE_ENTRY = join(root, "dist/src/tools/mcp/testing/fixture-server.js");

export function everythingStdio(): McpServer {
  return { command: process.execPath, args: [EVERYTHING_ENTRY, "stdio"] };
}

export function fixtureStdio(extra: Partial<McpServer> = {}): McpServer {
  return { command: process.execPath, args: [FIXTURE_ENTRY], ...extra };
}

export interface HttpServer {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * server-everything over HTTP on a free port (streamable HTTP at /mcp, or the older SSE transport at /sse);
 * resolves once it listens.
 */
export async function startEverythingHttp(
  transport: "streamableHttp" | "sse" = "streamableHttp",
  attempts = 3,
): Promise<HttpServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING_ENTRY, transport], {
      env: { PATH: process.env.PATH ?? "", PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const listening = await new Promise<boolean>((done) => {
      let said = "";
      child.stderr?.on("data", (chunk: Buffer) => {
        said += chunk.toString();
        if (said.includes("listening on port") || said.includes("running on port")) done(true);
        if (said.includes("already in use")) done(false);
      });
      child.once("exit", () => done(false));
    });
    const stop = () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once("exit", () => done());
        child.kill("SIGTERM");
      });
    const path = transport === "sse" ? "/sse" : "/mcp";
    if (listening) return { url: `http://127.0.0.1:${port}${path}`, process: child, stop };
    await stop();
    if (attempt >= attempts) throw new Error("server-everything did not start listening over HTTP");
  }
}

/**
 * The fixture server, except that its first start fails: it leaves `marker` behind and exits saying so; once the
 * marker is there it starts as the fixture server does.
 */
export function failingFirstStdio(marker: string): McpServer {
  const script = `const fs = require("node:fs");
const [marker, entry] = process.argv.slice(1);
if (!fs.existsSync(marker)) {
  fs.writeFileSync(marker, "");
  console.error("first start: not ready yet");
  process.exit(1);
}
import(require("node:url").pathToFileURL(entry).href);`;
  return { command: process.execPath, args: ["-e", script, marker, FIXTURE_ENTRY] };
}
