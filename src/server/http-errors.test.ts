// Requests node:http refuses before any route: answered in the API's JSON error shape, not a bare status line.
import { connect } from "node:net";
import { expect, it } from "vitest";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

/** Sends `request` as raw bytes; the whole answer once the daemon closes the connection. */
function rawExchange(request: string): Promise<string> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => socket.write(request));
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk;
    });
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

function parsed(answer: string): { status: number; headers: string; body: unknown } {
  const [head, body = ""] = answer.split("\r\n\r\n");
  return { status: Number(head!.split(" ")[1]), headers: head!.toLowerCase(), body: JSON.parse(body) };
}

it("answers malformed HTTP, oversized headers and an unmet Expect with a JSON error naming why", async () => {
  const garbage = parsed(await rawExchange("NOT HTTP AT ALL\r\n\r\n"));
  expect(garbage.status).toBe(400);
  expect(garbage.body).toEqual({
    error: { code: "bad_request", message: expect.stringMatching(/not well-formed/) },
  });
  expect(garbage.headers).toContain("content-type: application/json");
  expect(garbage.headers).toContain("x-content-type-options: nosniff");

  const big = `GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"x".repeat(20_000)}\r\n\r\n`;
  const headers = parsed(await rawExchange(big));
  expect(headers.status).toBe(431);
  expect(headers.body).toMatchObject({
    error: { message: expect.stringMatching(/headers are over 16 KiB/) },
  });

  const unmet = parsed(
    await rawExchange(
      `GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.tokens.admin}\r\nExpect: something-else\r\nConnection: close\r\n\r\n`,
    ),
  );
  expect(unmet.status).toBe(417);
  expect(unmet.body).toMatchObject({ error: { message: expect.stringMatching(/only 100-continue/) } });
});
