// A request body is held as it arrives, up to 8 MiB, until it is whole: a tenant may be sending only so many at
// once (429 past it), so clients that send most of one and stop cannot take the memory every tenant needs.
// Another tenant is not refused; a body that arrives (or a connection that closes) makes room.
import { connect, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon({ bodiesPerTenant: 2 });

const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
});

/** Starts a create whose body never arrives whole: a Content-Length far past what is sent. */
function stalled(token: string): void {
  const socket = connect(Number(new URL(t.url).port), "127.0.0.1");
  socket.on("error", () => {});
  socket.write(
    `POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{"harness":"`,
  );
  sockets.push(socket);
}

const create = (token: string) => raw(t.url, "POST", "/v1/sessions", { token, body: { harness: "echo" } });

it("refuses a tenant's request while its bound of bodies is arriving; another tenant's is served", async () => {
  stalled(t.tokens.other);
  stalled(t.tokens.other);
  await expect.poll(async () => (await create(t.tokens.other)).status).toBe(429);
  expect((await create(t.tokens.other)).body.error).toMatchObject({
    code: "limit_reached",
    message: expect.stringContaining('tenant "acme" is sending 2 request bodies at once'),
  });
  expect((await create(t.tokens.admin)).status).toBe(201);

  sockets.shift()!.destroy();
  await expect.poll(async () => (await create(t.tokens.other)).status).toBe(201);
});
