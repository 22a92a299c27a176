// A TCP or HTTP extension host's port answers every process on this machine: hosts on Brain's SDKs serve only a
// client that presents the token of their connection file (readable by its owner alone), and Brain presents it.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort } from "../../core/free-port.js";
import type { Session } from "../../core/session.js";
import { events, textOf } from "../../testing/brain.js";
import { catalogFactories, tsAgent, useScratch, writeExtension } from "../../testing/nui.js";
import { installExtension } from "./install.js";

const { scratch, cleanups, brain: scratchBrain } = useScratch();

interface Info {
  host: string;
  port: number;
  pid: number;
  token?: string;
}

/** The TypeScript test agent serving `mode`, and its connection file once written. */
async function startAgent(mode: "tcp" | "http", env: Record<string, string>, port = 0) {
  const child = spawn("node", [tsAgent, mode, ...(mode === "http" ? [String(port)] : [])], {
    env: { ...process.env, ...env },
    stdio: "ignore",
  });
  cleanups.push(() => void child.kill("SIGKILL"));
  const path = join(
    env.NUI_CONNECTIONS_DIR ?? join(env.HOME!, ".nui/connections"),
    `${env.NUI_CONNECTION_ID}.json`,
  );
  for (let i = 0; i < 400; i++) {
    try {
      const info = JSON.parse(readFileSync(path, "utf8")) as Info;
      if (info.pid === child.pid) return { child, path, info };
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${path} was never written`);
}

/** Sends `lines` on a fresh connection; resolves with what came back once the host closed it (or after 5 s). */
function exchange(
  info: Info,
  lines: unknown[],
): Promise<{ replies: Record<string, unknown>[]; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ host: info.host, port: info.port });
    let received = "";
    const done = (closed: boolean) => {
      socket.destroy();
      const replies = received.split("\n").filter(Boolean);
      resolve({ replies: replies.map((line) => JSON.parse(line) as Record<string, unknown>), closed });
    };
    const timer = setTimeout(() => done(false), 5000);
    // A string is sent as it is; anything else as a line of JSON.
    const text = lines.map((line) => (typeof line === "string" ? line : `${JSON.stringify(line)}\n`));
    socket.on("connect", () => socket.write(text.join("")));
    socket.on("data", (chunk) => {
      received += chunk;
      if (received.includes('"id":"info"')) {
        clearTimeout(timer);
        done(false);
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      done(true);
    });
  });
}

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

describe("extension hosts on Brain's SDKs answer only who read their connection file", () => {
  it("a TCP host serves a connection once it presented the file's token, and refuses and closes any other", async () => {
    const dir = scratch("brain-ext-conns-");
    const { child, path, info } = await startAgent("tcp", {
      NUI_CONNECTIONS_DIR: dir,
      NUI_CONNECTION_ID: "ext-ts-echo",
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(info.token).toMatch(/^[\w-]{43}$/);
    const shutdown = { jsonrpc: "2.0", id: 2, method: "harness.shutdown", params: {} };
    for (const first of [
      shutdown,
      { jsonrpc: "2.0", id: 1, method: "harness.run", params: { message: "hi", runId: "r1" } },
      { jsonrpc: "2.0", id: 1, method: "harness.authenticate", params: { token: "guessed" } },
    ]) {
      // What follows a refused first request on its connection is not served either.
      const { replies, closed } = await exchange(info, [first, shutdown]);
      expect(closed).toBe(true);
      expect(replies).toHaveLength(1);
      expect(replies[0]).toMatchObject({ error: { code: -32001 } });
      expect(JSON.stringify(replies[0])).toContain("harness.authenticate {token}");
    }
    // Nor may a stranger make it hold a first line that never ends, or send lines that are not JSON-RPC.
    expect(await exchange(info, ["x".repeat(200 * 1024)])).toEqual({ replies: [], closed: true });
    expect(await exchange(info, ["not JSON-RPC\n"])).toEqual({ replies: [], closed: true });
    expect(alive(child)).toBe(true);
    const { replies } = await exchange(info, [
      { jsonrpc: "2.0", id: 0, method: "harness.authenticate", params: { token: info.token } },
      { jsonrpc: "2.0", id: "info", method: "harness.info", params: {} },
    ]);
    expect(replies).toEqual([
      { jsonrpc: "2.0", id: 0, result: { ok: true } },
      expect.objectContaining({ id: "info", result: expect.objectContaining({ name: "ts-agent" }) }),
    ]);
  });

  it("an HTTP host that writes a connection file answers 401 to a request without its token", async () => {
    const dir = scratch("brain-ext-conns-");
    const { child, path, info } = await startAgent("http", {
      NUI_CONNECTIONS_DIR: dir,
      NUI_CONNECTION_ID: "ext-ts-http",
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const url = `http://127.0.0.1:${info.port}`;
    // A web page can send this one without a preflight.
    const stranger = await fetch(`${url}/shutdown`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
    });
    expect(stranger.status).toBe(401);
    expect(alive(child)).toBe(true);
    const own = await fetch(`${url}/info`, { headers: { authorization: `Bearer ${info.token}` } });
    expect(own.status).toBe(200);
  });

  it("Brain presents a TCP host's token, and says what to do when the host refuses the one its file names", async () => {
    const home = scratch("brain-ext-home-");
    const hostHome = scratch("brain-ext-hosthome-");
    await installExtension(
      writeExtension(scratch("brain-ext-src-"), "running", { transport: "tcp" }),
      join(home, "extensions"),
    );
    const { path, info } = await startAgent("tcp", { HOME: hostHome, NUI_CONNECTION_ID: "ext-running-echo" });
    const { factories } = catalogFactories({ brainHome: home, hostHome });
    const { brain } = scratchBrain({ factories, home });
    const turnOf = async (session: Session, prompt: string) => {
      const turn = await session.prompt(prompt);
      return { outcome: await turn.settled, text: textOf(await events(session), turn.turn) };
    };
    const a = await brain.create({ harness: "ext:running/echo" });
    expect((await turnOf(a, "hi")).text).toMatch(/^ts says: hi /);
    writeFileSync(path, JSON.stringify({ ...info, token: "not-the-hosts" }));
    const b = await brain.create({ harness: "ext:running/echo" });
    const refused = await turnOf(b, "hi");
    expect(refused.outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(refused.outcome.error?.message).toMatch(
      /did not take the token of its connection file .*start the host again/,
    );
    expect(refused.outcome.error?.message).not.toContain("not-the-hosts");
    // The session that presented the right one is served on.
    expect((await turnOf(a, "again")).text).toMatch(/^ts says: again /);
  });

  it("Brain finds the token of an HTTP host at the manifest's fixed port in the connection file the host wrote", async () => {
    const home = scratch("brain-ext-home-");
    const hostHome = scratch("brain-ext-hosthome-");
    const port = await freePort();
    const src = writeExtension(scratch("brain-ext-src-"), "fixed", { transport: "http", port });
    await installExtension(src, join(home, "extensions"));
    await startAgent("http", { HOME: hostHome, NUI_CONNECTION_ID: "ext-fixed-echo" }, port);
    const { factories } = catalogFactories({ brainHome: home, hostHome });
    const { brain } = scratchBrain({ factories, home });
    const session = await brain.create({ harness: "ext:fixed/echo" });
    const turn = await session.prompt("hi");
    expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
    expect(textOf(await events(session), turn.turn)).toMatch(/^ts says: hi /);
  });
});
