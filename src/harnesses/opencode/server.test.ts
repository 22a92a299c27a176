// The connection to `opencode serve`, against a stand-in server: what Brain reads of its answers.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HarnessError } from "../../core/harness.js";
import { tempDir } from "../../testing/brain.js";
import { OpencodeServer, type ServerStart } from "./server.js";

/**
 * Health, the event stream, /sent (how much of the answer it wrote), and a 64 MiB answer to anything else; on the
 * port it is given, or, for 0, on one the OS picks, named on stdout as opencode does. With TAKEN set, a port it is
 * given has been taken first by another local user's server, which answers everything and writes what it is sent
 * to the file TAKEN names.
 */
const STAND_IN = `#!/usr/bin/env node
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
if (port !== 0 && process.env.TAKEN) {
  createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => { body += chunk; });
    req.on("end", () => {
      appendFileSync(process.env.TAKEN, req.method + " " + req.url + " " + body + "\\n");
      if (req.url === "/event") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        return res.write('data: {"type":"server.connected","properties":{}}\\n\\n');
      }
      res.end("{}");
    });
  }).listen(port, "127.0.0.1");
} else {
const chunk = Buffer.alloc(1 << 20, "a");
let sent = 0;
// opencode's own check: HTTP Basic, its user OPENCODE_SERVER_USERNAME's or "opencode".
const user = process.env.OPENCODE_SERVER_USERNAME ?? "opencode";
const auth = "Basic " + Buffer.from(user + ":" + process.env.OPENCODE_SERVER_PASSWORD).toString("base64");
createServer(async (req, res) => {
  if (req.headers.authorization !== auth) {
    res.writeHead(401);
    return res.end();
  }
  if (req.url === "/global/health") return res.end("{}");
  if (req.url === "/sent") return res.end(String(sent));
  if (req.url === "/session/reset") return req.socket.destroy();
  if (req.url === "/session/elsewhere") {
    res.writeHead(307, { location: process.env.ELSEWHERE });
    return res.end();
  }
  if (req.url === "/event") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write('data: {"type":"server.connected","properties":{}}\\n\\n');
    if (process.env.NOT_JSON) res.write("data: not json\\n\\ndata: nor this\\n\\n" + 'data: {"type":"after"}\\n\\n');
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  let gone = false;
  res.once("close", () => { gone = true; });
  while (sent < 64 << 20 && !gone) {
    sent += chunk.length;
    if (!res.write(chunk)) {
      await new Promise((resolve) => {
        const on = () => { res.off("drain", on).off("close", on); resolve(); };
        res.on("drain", on).on("close", on);
      });
    }
  }
  res.end();
}).listen(port, "127.0.0.1", function () {
  console.log("opencode server listening on http://127.0.0.1:" + this.address().port);
});
}
`;

const servers: OpencodeServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

/** The stand-in started as `opencode serve`, with `env` added to its environment. */
async function standIn(
  env: Record<string, string> = {},
  more: Partial<Pick<ServerStart, "onEvent" | "onWarn">> = {},
): Promise<OpencodeServer> {
  const dir = tempDir("brain-opencode-server-");
  const command = join(dir, "opencode");
  writeFileSync(command, STAND_IN);
  chmodSync(command, 0o755);
  const server = await OpencodeServer.start({
    command,
    env: { PATH: process.env.PATH ?? "", ...env },
    cwd: dir,
    extraArgs: [],
    startTimeoutMs: 20_000,
    onEvent: () => {},
    onGone: () => {},
    ...more,
  });
  servers.push(server);
  return server;
}

describe("opencode's server", () => {
  it("an answer over 10 MiB fails its call instead of being read whole", async () => {
    const server = await standIn();
    await expect(server.call("GET", "/session/s1")).rejects.toThrow(
      "opencode: GET /session/s1 answered more than 10 MiB (HTTP 200), more than Brain reads of an answer",
    );
    expect(Number(await server.call("GET", "/sent"))).toBeLessThan(64 << 20);
  });

  it("a call the server drops unanswered names the call and the cause, not only 'fetch failed'", async () => {
    const server = await standIn();
    const failed = server.call("POST", "/session/reset", {});
    await expect(failed).rejects.toThrow(
      /^opencode: POST \/session\/reset got no answer: fetch failed \(\w+.*\)/,
    );
    await expect(failed).rejects.toBeInstanceOf(HarnessError);
  });

  it("starts when the environment it is given names another server user: Brain's credentials are the ones it takes", async () => {
    const server = await standIn({ OPENCODE_SERVER_USERNAME: "admin" });
    expect(await server.call("GET", "/sent")).toBe(0);
  });

  it("a local process that takes the server's port first is not sent the session's prompts: opencode picks its own", async () => {
    const taken = join(tempDir("brain-opencode-taken-"), "requests.log");
    const server = await standIn({ TAKEN: taken });
    expect(await server.call("GET", "/sent")).toBe(0);
    // The stand-in's own server answers this with more than Brain reads; the prompt is what matters.
    await server
      .call("POST", "/session/s1/prompt_async", { parts: [{ type: "text", text: "PRIVATE" }] })
      .catch(() => {});
    expect(existsSync(taken) ? readFileSync(taken, "utf8") : "").toBe("");
  });

  it("an event that is not JSON is skipped with one warning, and the events after it still arrive", async () => {
    const warnings: string[] = [];
    const events: unknown[] = [];
    await standIn(
      { NOT_JSON: "1" },
      { onWarn: (message) => warnings.push(message), onEvent: (event) => events.push(event) },
    );
    await expect.poll(() => events).toContainEqual({ type: "after" });
    expect(warnings).toEqual([
      "opencode: the server sent an event that is not JSON, which Brain skips (and any more like it): not json",
    ]);
  });

  it("a redirect fails its call instead of being followed to an address only Brain's host reaches", async () => {
    // The stand-in for what only Brain's host reaches (a cloud metadata service, the daemon itself).
    const reached: string[] = [];
    const internal = createServer((req, res) => {
      reached.push(`${req.method} ${req.url}`);
      res.end('{"secret":"AKIA-INTERNAL"}');
    });
    await new Promise<void>((resolve) => internal.listen(0, "127.0.0.1", resolve));
    try {
      const port = (internal.address() as AddressInfo).port;
      const server = await standIn({ ELSEWHERE: `http://127.0.0.1:${port}/latest/meta-data` });
      await expect(server.call("POST", "/session/elsewhere", {})).rejects.toThrow(
        "opencode: POST /session/elsewhere answered HTTP 307",
      );
      expect(reached).toEqual([]);
    } finally {
      internal.close();
    }
  });
});
