// One agent cannot hold the shared daemon's sockets without end through its credential proxy: past
// MAX_CONNECTIONS a connection is answered with a 429 that names the cap (and the cap frees as connections
// close), a connection that sends no request head is closed when its wait fires (past twice the cap, at once), and
// a request body that stops sending is cut with a 408 when its idle timer fires, the provider's request with it.
import { readdirSync } from "node:fs";
import { type ClientRequest, createServer, type IncomingMessage } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { nodeRequest } from "../../testing/http.js";
import { CredentialProxy, type ProxyTimers } from "./credential-proxy.js";
import { MAX_CONNECTIONS, type ProxyTimer } from "./proxy-connections.js";
import { KEY } from "./testing/proxy-bed.js";

/** A provider that answers HEAD at once and holds every other request open, counting what it was sent. */
async function holdingUpstream() {
  const held: IncomingMessage[] = [];
  let read = 0;
  let closed = 0;
  const server = createServer((req, res) => {
    if (req.method === "HEAD") return void res.end();
    held.push(req);
    req.on("data", (chunk: Buffer) => {
      read += chunk.length;
    });
    res.on("close", () => closed++);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => held.length,
    read: () => read,
    closed: () => closed,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A request on a connection of its own; `sent` is called with it before its answer comes. */
function send(
  url: string,
  method: string,
  headers: Record<string, string | number> = {},
  sent?: (req: ClientRequest) => void,
): Promise<{ status: number; text: string }> {
  return nodeRequest(url, { method, agent: false, headers }, sent);
}

/** A ProxyTimer the test fires itself (`fire`: every one armed now) instead of waiting its time out. */
function heldTimer() {
  const armed = new Set<() => void>();
  const timer: ProxyTimer = (fire) => {
    armed.add(fire);
    return () => armed.delete(fire);
  };
  const fire = () => {
    for (const one of [...armed]) one();
  };
  return { timer, armed, fire };
}

/** A connection to `port` that is open and has sent nothing; `closed` once the other end has closed it. */
async function silent(port: number): Promise<{ socket: Socket; closed: () => boolean }> {
  const socket = connect(port, "127.0.0.1");
  let closed = false;
  socket.on("close", () => {
    closed = true;
  });
  socket.on("error", () => {}); // a reset from the proxy closes it as well
  await new Promise((resolve) => socket.once("connect", resolve));
  return { socket, closed: () => closed };
}

/** The file descriptors this process holds: the proxy's sockets and the test's ends of them among them. */
const descriptors = () => readdirSync("/proc/self/fd").length;

/** A proxy before a holding provider, with `timers` its own; both are closed once `body` is done. */
async function withProxy(
  timers: ProxyTimers,
  body: (p: CredentialProxy, upstream: Awaited<ReturnType<typeof holdingUpstream>>) => Promise<void>,
): Promise<void> {
  const upstream = await holdingUpstream();
  const p = await CredentialProxy.start(
    { wire: "messages", api_key: KEY, base_url: upstream.url },
    undefined,
    timers,
  );
  try {
    await body(p, upstream);
  } finally {
    await p.close();
    await upstream.close();
  }
}

describe("credential proxy limits", { timeout: 120_000 }, () => {
  it("answers a connection past the cap with a 429 naming it, and takes one again once a held one closes", async () => {
    const open: ClientRequest[] = [];
    await withProxy({}, async (p, upstream) => {
      try {
        for (let i = 0; i < MAX_CONNECTIONS; i++) {
          send(`${p.url}/v1/messages`, "POST", {}, (req) => {
            open.push(req);
            req.end("{}");
          }).catch(() => {}); // destroyed below
        }
        await expect.poll(upstream.held, { timeout: 60_000 }).toBe(MAX_CONNECTIONS);
        // Without a cap, the provider gets this one too and holds it: that is told, not waited out.
        let answered = false;
        const forwarded = async () => {
          while (!answered && upstream.held() === MAX_CONNECTIONS)
            await new Promise((r) => setTimeout(r, 50));
          if (!answered) throw new Error(`connection ${MAX_CONNECTIONS + 1} was forwarded to the provider`);
          return { status: 0, text: "" };
        };
        const refused = await Promise.race([
          send(`${p.url}/v1/messages`, "POST", {}, (req) => req.end("{}")),
          forwarded(),
        ]).finally(() => {
          answered = true;
        });
        expect(refused.status).toBe(429);
        expect(refused.text).toContain(`limit of ${MAX_CONNECTIONS} connections`);
        expect(upstream.held()).toBe(MAX_CONNECTIONS);
        open.pop()?.destroy();
        await expect
          .poll(async () => (await send(`${p.url}/`, "HEAD")).status, { timeout: 60_000 })
          .toBe(200);
      } finally {
        for (const req of open) req.destroy();
      }
    });
  });

  it("closes connections that send no request head: past twice the cap at once, the rest when their wait fires", async () => {
    const headers = heldTimer();
    const past = 16;
    const held: Socket[] = [];
    await withProxy({ headers: headers.timer }, async (p) => {
      try {
        const before = descriptors();
        const open: Awaited<ReturnType<typeof silent>>[] = [];
        for (let i = 0; i < 2 * MAX_CONNECTIONS + past; i++) open.push(await silent(p.port));
        held.push(...open.map((one) => one.socket));
        const closed = () => open.filter((one) => one.closed()).length;
        // Before any wait has fired: those past the cap and the cap's worth waiting to be told so are let go.
        await expect.poll(closed).toBe(past);
        expect(headers.armed.size).toBe(2 * MAX_CONNECTIONS);
        headers.fire();
        await expect.poll(closed).toBe(open.length);
        await expect.poll(descriptors).toBeLessThanOrEqual(before);
        expect((await send(`${p.url}/`, "HEAD")).status).toBe(200);
      } finally {
        for (const socket of held) socket.destroy();
      }
    });
  });

  it("closes a kept-alive connection whose next request's head does not come when its wait fires", async () => {
    const headers = heldTimer();
    await withProxy({ headers: headers.timer }, async (p) => {
      const { socket, closed } = await silent(p.port);
      try {
        let read = "";
        socket.on("data", (chunk: Buffer) => {
          read += chunk.toString();
        });
        socket.write(`HEAD /${p.token}/ HTTP/1.1\r\nHost: proxy\r\n\r\n`);
        await expect.poll(() => read).toMatch(/^HTTP\/1\.1 200 /);
        // The next head a byte at a time: each byte put off Node's own keep-alive timeout, which only counts idleness.
        socket.write(`POST /${p.token}/v1/messages HTTP/1.1\r\nHost: proxy\r\nX-Slow: `);
        await expect
          .poll(() => {
            socket.write("a");
            headers.fire();
            return closed();
          })
          .toBe(true);
      } finally {
        socket.destroy();
      }
    });
  });

  it("cuts a body that stops sending with a 408 when its idle timer fires, and ends the provider's request", async () => {
    const bodyIdle = heldTimer();
    await withProxy({ bodyIdle: bodyIdle.timer }, async (p, upstream) => {
      let client: ClientRequest | undefined;
      try {
        const half = Buffer.alloc(64 * 1024, "a");
        const answered = send(
          `${p.url}/v1/messages`,
          "POST",
          { "content-length": half.length * 2 },
          (req) => {
            client = req;
            req.write(half);
          },
        );
        answered.catch(() => {}); // a failed wait destroys the request below: that is not another failure
        // The first half reached the provider, and the proxy waits on the sender for the rest: it has stalled.
        await expect.poll(upstream.read, { timeout: 60_000 }).toBe(half.length);
        await expect.poll(() => bodyIdle.armed.size, { timeout: 60_000 }).toBe(1);
        bodyIdle.fire();
        const answer = await answered;
        expect(answer.status).toBe(408);
        expect(answer.text).toContain("the request body sent nothing for 30 s");
        await expect.poll(upstream.closed, { timeout: 60_000 }).toBe(1);
      } finally {
        client?.destroy();
      }
    });
  });
});
