// GET /v1/sessions/{id}/log answers up to 16 MiB of events as one body, held by the daemon until its client reads
// it: a tenant may have only so many on their way at once (429 past it), so clients that ask and never read
// cannot take the memory every tenant needs. Another tenant is not refused; an answer read makes room.
import { connect, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon({ logReadsPerTenant: 2 });

const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
});

/** A session whose first log page (up to 16 MiB) is far more than the sockets between client and daemon hold. */
async function longSession(token: string): Promise<string> {
  const id = (await raw(t.url, "POST", "/v1/sessions", { token, body: { harness: "echo" } })).body
    .id as string;
  const text = "x".repeat(4 * 1024 * 1024 - 4096);
  for (let i = 0; i < 3; i++) {
    const started = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, { token, body: { text } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    await expect
      .poll(async () => (await raw(t.url, "GET", `/v1/sessions/${id}`, { token })).body.active_turn, {
        timeout: 30_000,
      })
      .toBeUndefined();
  }
  return id;
}

/** Asks for the page and reads no more than the answer's first piece: its status line. */
function unread(id: string, token: string): Promise<string> {
  const socket = connect(Number(new URL(t.url).port), "127.0.0.1");
  sockets.push(socket);
  socket.write(
    `GET /v1/sessions/${id}/log?limit=10000 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`,
  );
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.once("data", (piece: Buffer) => {
      socket.pause();
      resolve(piece.toString("latin1").split("\r\n")[0]!);
    });
  });
}

it("refuses a tenant's log read while its bound of answers is on their way; another tenant's is served", async () => {
  const token = t.tokens.other;
  const id = await longSession(token);
  // One after the other: each is counted once its answer has begun.
  expect(await unread(id, token)).toBe("HTTP/1.1 200 OK");
  expect(await unread(id, token)).toBe("HTTP/1.1 200 OK");
  const read = () => raw(t.url, "GET", `/v1/sessions/${id}/log?limit=1`, { token });
  const refused = await read();
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({
    code: "limit_reached",
    message: expect.stringContaining('tenant "acme" has 2 answers of GET /v1/sessions/{id}/log on their way'),
  });
  const mine = (
    await raw(t.url, "POST", "/v1/sessions", { token: t.tokens.admin, body: { harness: "echo" } })
  ).body.id as string;
  expect((await raw(t.url, "GET", `/v1/sessions/${mine}/log`, { token: t.tokens.admin })).status).toBe(200);

  sockets.shift()!.destroy();
  await expect.poll(async () => (await read()).status).toBe(200);
}, 120_000);
