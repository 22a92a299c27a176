// The sandbox every real-CLI test runs in: a command behind the launcher reaches the fake provider at its usual
// address, cannot reach anything else on the host, and a server it starts is reachable from the host.
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SandboxedProvider, startSandboxedProvider } from "./sandbox.js";

let sandbox: SandboxedProvider;
let other: Server;
let otherPort: number;

beforeAll(async () => {
  sandbox = await startSandboxedProvider();
  other = createServer((socket) => socket.end("reached\n"));
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  otherPort = (other.address() as { port: number }).port;
});
afterAll(async () => {
  await sandbox.close();
  await new Promise((resolve) => other.close(resolve));
});

/** Runs a Node snippet behind the sandbox launcher; returns its stdout. */
async function inSandbox(script: string): Promise<string> {
  const [command, ...args] = [...sandbox.launcher, process.execPath, "-e", script];
  const { stdout } = await promisify(execFile)(command!, args, { timeout: 30_000 });
  return stdout.trim();
}

describe("the netns sandbox", () => {
  it("reaches the fake provider at its URL, and the request is in the provider's log", async () => {
    const out = await inSandbox(
      `fetch(${JSON.stringify(`${sandbox.provider.url}/v1/chat/completions`)}, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.json()).then((b) => console.log(b.choices[0].message.content))`,
    );
    expect(out).toBe("echo: hi");
    expect(sandbox.provider.requests).toHaveLength(1);
  });

  it("cannot reach another port on the host, nor any outside address", async () => {
    const out = await inSandbox(`
      const net = require("node:net");
      const tryConnect = (host, port) => new Promise((resolve) => {
        const s = net.connect({ host, port, timeout: 2000 }, () => { s.destroy(); resolve("connected"); });
        s.on("error", (e) => resolve(e.code));
        s.on("timeout", () => { s.destroy(); resolve("timeout"); });
      });
      Promise.all([tryConnect("127.0.0.1", ${otherPort}), tryConnect("1.1.1.1", 443)]).then((r) => console.log(r.join(" ")));
    `);
    const [local, outside] = out.split(" ");
    expect(local).toBe("ECONNREFUSED");
    expect(outside).not.toBe("connected");
  });

  it("publishes a server the command starts back to the host, on the same port", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const running = inSandbox(
      `require("node:http").createServer((q, s) => { s.end("from inside"); setTimeout(() => process.exit(0), 50); }).listen(${port}, "127.0.0.1")`,
    );
    let body = "";
    for (let i = 0; i < 200 && body === ""; i++) {
      try {
        body = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(body).toBe("from inside");
    await running;
  });

  it("gives a server that binds port 0 a port below the host's ephemeral range, and publishes it", async () => {
    // opencode serve --port 0: the port it is given comes back out on the host's same port, which must then be
    // free there; the host's port-0 servers and its clients' connections all take ports in that range.
    const [hostFirst] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    const [command, ...args] = [
      ...sandbox.launcher,
      process.execPath,
      "-e",
      `require("node:http").createServer((q, s) => { s.end("from inside"); setTimeout(() => process.exit(0), 50); }).listen(0, "127.0.0.1", function () { console.log(this.address().port); })`,
    ];
    const child = spawn(command!, args, { stdio: ["ignore", "pipe", "inherit"] });
    const exited = once(child, "exit");
    const [line] = (await once(child.stdout, "data")) as [Buffer];
    const port = Number(line.toString().trim());
    expect(port).toBeLessThan(Number(hostFirst));
    let body = "";
    for (let i = 0; i < 200 && body === ""; i++) {
      try {
        body = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(body).toBe("from inside");
    await exited;
  });
});
