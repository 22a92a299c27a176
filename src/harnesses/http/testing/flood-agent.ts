// What the read-gate tests of the HTTP/SSE agents (backpressure, interrupt-paused) share: a stand-in agent in a
// process of its own, flooding a run's event stream, and a `remote` session on it whose log's fsync the test holds.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { rmSync } from "node:fs";
import { afterEach } from "vitest";
import type { HarnessFactory } from "../../../core/harness.js";
import { type TestIO, testIO } from "../../../store/fs/testing/fault-io.js";
import { FLOOD_EVENTS, FLOOD_PAD } from "../../../testing/backlog.js";
import { makeBrain, type TestBrain, tempDir } from "../../../testing/brain.js";
import { RemoteFactory, type RemoteTimeouts } from "../remote.js";

/**
 * An HTTP/SSE agent working in $DIR (its pid in `pid`): at the message "flood", once told to go (a file `go` beside
 * `ready`), FLOOD_EVENTS text events as fast as its socket takes them until a POST /cancel (noted in `interrupted`)
 * comes, noting in `progress` how many it wrote, then `done` (with $SILENT set and cancelled, nothing: an agent
 * that does not end its run, its stream left open); any other message it echoes. It prints its port.
 */
const AGENT = `
const { createServer } = require("node:http");
const fs = require("node:fs");
const dir = process.env.DIR;
fs.writeFileSync(dir + "/pid", String(process.pid));
let stopped = false;
const send = (res, event) => res.write("data: " + JSON.stringify(event) + "\\n\\n");
async function run(res, message) {
  if (message === "flood") {
    stopped = false;
    fs.writeFileSync(dir + "/ready", "");
    while (!fs.existsSync(dir + "/go")) await new Promise((r) => setTimeout(r, 5));
    let i = 0;
    for (; i < ${FLOOD_EVENTS} && !stopped; i++) {
      const more = send(res, { type: "text", content: String(i).padStart(6, "0") + "x".repeat(${FLOOD_PAD}) });
      if (i % 16 === 15) fs.writeFileSync(dir + "/progress", String(i + 1));
      if (!more) await new Promise((r) => res.once("drain", r));
    }
    fs.writeFileSync(dir + "/progress", String(i));
    if (stopped && process.env.SILENT) return;
  } else send(res, { type: "text", content: "echo: " + message });
  send(res, { type: "done" });
  res.end();
}
createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    if (req.url === "/info") return res.end(JSON.stringify({ name: "flood", version: "1", capabilities: {} }));
    if (req.url === "/run") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      return run(res, JSON.parse(body).message);
    }
    if (req.url === "/cancel") {
      stopped = true;
      fs.writeFileSync(dir + "/interrupted", "");
    }
    res.end("{}");
  });
}).listen(0, "127.0.0.1", function () {
  console.log(this.address().port);
});
`;

/**
 * Sessions on stand-in agents, each in a brain of its own whose log's fsync the test controls (`io`); the brain
 * and the agent are gone after each test. `wrap` changes the factory (a test without the read gate).
 */
export function useHeldHttpAgent() {
  let t: TestBrain | undefined;
  const agents: ChildProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
    for (const agent of agents.splice(0)) agent.kill("SIGKILL");
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return async (
    prefix: string,
    timeouts: Partial<RemoteTimeouts> = {},
    wrap: (factory: HarnessFactory) => HarnessFactory = (factory) => factory,
    env: Record<string, string> = {},
  ) => {
    const dir = tempDir(prefix);
    dirs.push(dir);
    const agent = spawn(process.execPath, ["-e", AGENT], {
      env: { ...process.env, ...env, DIR: dir },
      stdio: ["ignore", "pipe", "inherit"],
    });
    agents.push(agent);
    const [line] = (await once(agent.stdout!, "data")) as [Buffer];
    const port = Number(line.toString().trim());
    const io: TestIO = testIO();
    t = makeBrain({ factories: [wrap(new RemoteFactory("remote", timeouts))], io });
    const session = await t.brain.create({
      harness: "remote",
      config: { options: { host: "127.0.0.1", port } },
    });
    return { dir, io, session };
  };
}
