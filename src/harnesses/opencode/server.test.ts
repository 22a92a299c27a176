// The connection to `opencode serve`, against a stand-in server: what Brain reads of its answers.
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { OpencodeServer } from "./server.js";

/** Health, the event stream, /sent (how much of the answer it wrote), and a 64 MiB answer to anything else. */
const STAND_IN = `#!/usr/bin/env node
import { createServer } from "node:http";
const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
const chunk = Buffer.alloc(1 << 20, "a");
let sent = 0;
createServer(async (req, res) => {
  if (req.url === "/global/health") return res.end("{}");
  if (req.url === "/sent") return res.end(String(sent));
  if (req.url === "/event") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    return res.write('data: {"type":"server.connected","properties":{}}\\n\\n');
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
}).listen(port, "127.0.0.1");
`;

const servers: OpencodeServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

describe("opencode's server", () => {
  it("an answer over 10 MiB fails its call instead of being read whole", async () => {
    const dir = tempDir("brain-opencode-server-");
    const command = join(dir, "opencode");
    writeFileSync(command, STAND_IN);
    chmodSync(command, 0o755);
    const server = await OpencodeServer.start({
      command,
      env: { PATH: process.env.PATH ?? "" },
      cwd: dir,
      extraArgs: [],
      startTimeoutMs: 20_000,
      onEvent: () => {},
      onGone: () => {},
    });
    servers.push(server);
    await expect(server.call("GET", "/session/s1")).rejects.toThrow(
      "opencode: GET /session/s1 answered more than 10 MiB (HTTP 200), more than Brain reads of an answer",
    );
    expect(Number(await server.call("GET", "/sent"))).toBeLessThan(64 << 20);
  });
});
