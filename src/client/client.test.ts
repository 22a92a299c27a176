// The client against what may answer at an address that is not the daemon's.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BrainClient, ClientError } from "./client.js";

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

describe("BrainClient", () => {
  it("says which address answered what is not JSON, instead of a bare JSON parse error", async () => {
    server = createServer((_, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><title>Router login</title>");
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const error = await new BrainClient({ url, token: "t".repeat(20) }).whoami().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).code).toBe("bad_response");
    expect((error as Error).message).toBe(
      `${url} answered GET /v1/whoami with a body that is not JSON (text/html): is it the address of \`brain serve\`?`,
    );
  });

  // A server that answers the events GET with something else, 200 all the same: each answer ended as "the daemon
  // ended the stream" and `brain attach` reconnected to it once a second for ever.
  it("says which address answered the event stream with what is not one, instead of reconnecting to it", async () => {
    server = createServer((_, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"status":"ok"}');
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const stop = new AbortController();
    const drops: string[] = [];
    const events = new BrainClient({ url, token: "t".repeat(20) }).events("s1", {
      signal: stop.signal,
      onDrop: (_, why) => {
        drops.push(why);
        stop.abort();
      },
    });
    await expect(events.next()).rejects.toThrow(
      `${url} answered GET /v1/sessions/s1/events with application/json, not an event stream: is it the address of \`brain serve\`?`,
    );
    expect(drops).toEqual([]);
  });

  // `brain run --server` failed with "no value for {id}", and `brain attach` printed "undefined, undefined".
  it("says which address answered without the fields the client reads, instead of using undefined", async () => {
    server = createServer((_, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"status":"ok"}');
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new BrainClient({ url, token: "t".repeat(20) });
    const refusal = (call: Promise<unknown>) =>
      call.then(
        () => undefined,
        (err: ClientError) => `${err.code}: ${err.message}`,
      );
    const hint =
      "which Brain's daemon sends: is it the address of `brain serve` (and of a Brain as new as this one)?";
    expect(await refusal(client.create({ harness: "echo" }))).toBe(
      `bad_response: ${url} answered POST /v1/sessions without a string "id", ${hint}`,
    );
    expect(await refusal(client.session("s1"))).toBe(
      `bad_response: ${url} answered GET /v1/sessions/s1 without a string "id", ${hint}`,
    );
    expect(await refusal(client.prompt("s1", "hi"))).toBe(
      `bad_response: ${url} answered POST /v1/sessions/s1/prompt without a string "turn", ${hint}`,
    );
  });
});
