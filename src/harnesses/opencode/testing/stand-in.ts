// What the read-gate tests of opencode (backpressure, interrupt-paused, call-paused) share: a stand-in for
// `opencode serve` and a session on it whose log's fsync the test holds.
import { afterEach } from "vitest";
import type { HarnessFactory } from "../../../core/harness.js";
import { type TestIO, testIO } from "../../../store/fs/testing/fault-io.js";
import { makeBrain, type TestBrain } from "../../../testing/brain.js";
import { useStandIns } from "../../../testing/cli.js";
import type { CliFamilyFactoryOptions } from "../../cli/family.js";
import { OpencodeFactory } from "../factory.js";

/**
 * The start of a stand-in server's script: its version, $DIR, the port it was told, and `send` / `message` /
 * `delta` writing events on the `/event` stream (`events`), `done` called once the socket took them.
 */
export const SERVE_HEAD = `#!${process.execPath}
if (process.argv.includes("--version")) { console.log("1.0.0"); process.exit(0); }
const { createServer } = require("node:http");
const fs = require("node:fs");
const dir = process.env.DIR;
const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
let events;
const send = (type, properties, done) =>
  events.write("data: " + JSON.stringify({ type, properties }) + "\\n\\n", done);
const message = (id) => send("message.updated", { info: { id, sessionID: "ses_1", role: "assistant" } });
const delta = (id, delta, done) =>
  send("message.part.delta", { sessionID: "ses_1", messageID: id, partID: "prt_" + id, field: "text", delta }, done);
`;

/**
 * The end of a stand-in server's script: the event stream, a new session "ses_1", a prompt handed to the script's
 * `prompt(req, res, body)`, an abort to its `abort(res)` where it has one, anything else to its
 * `other(req, res, body)` where it has one and it returns true; else answered with {}.
 */
export const SERVE_TAIL = `
createServer((req, res) => {
  if (req.url === "/event") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    events = res;
    return send("server.connected", {});
  }
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    if (req.url.endsWith("/abort") && typeof abort === "function") return abort(res);
    if (req.url.endsWith("/prompt_async")) return prompt(req, res, body);
    if (typeof other === "function" && other(req, res, body)) return;
    res.end(req.method === "POST" && req.url === "/session" ? '{"id":"ses_1"}' : "{}");
  });
}).listen(port, "127.0.0.1", function () {
  console.log("opencode server listening on http://127.0.0.1:" + this.address().port);
});
`;

/**
 * Sessions on stand-in servers, each in a brain of its own whose log's fsync the test controls (`io`), closed
 * after each test. `wrap` changes the factory (a test without the read gate).
 */
export function useHeldOpencode() {
  const standIns = useStandIns();
  let t: TestBrain | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });
  return async (
    prefix: string,
    script: string,
    options: Omit<CliFamilyFactoryOptions, "bin"> = {},
    wrap: (factory: HarnessFactory) => HarnessFactory = (factory) => factory,
  ) => {
    const { dir, bin } = standIns.make(prefix, "opencode", script);
    const io: TestIO = testIO();
    t = makeBrain({
      factories: [wrap(new OpencodeFactory({ ...options, bin, env: { DIR: dir, ...options.env } }))],
      provider: { base_url: "http://127.0.0.1:9", api_key: "sk-fake" },
      io,
    });
    const session = await t.brain.create({ harness: "opencode", config: { model: "m1" } });
    return { dir, io, session };
  };
}
