// The response sink over real HTTP: what an HTTP/1.1 client reads is the texts written, as chunks of the one
// chunked body that the response's end closes; an HTTP/1.0 client and a HEAD request get what res.write gives
// them; a full socket's drain reaches the stream.
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ChunkFrames, ResponseSink } from "./sink.js";

/** A server whose one request gets a sink (after the head and a first write, as the events route does). */
async function serve(onSink: (sink: ResponseSink, res: http.ServerResponse) => void): Promise<http.Server> {
  const frames = new ChunkFrames();
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("retry: 1000\n\n");
    onSink(new ResponseSink(res, frames), res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

/** Sends `request` as is on a fresh connection; resolves with all the server sent once it closes. */
function rawRequest(server: http.Server, request: string): Promise<string> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(request));
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}

const bodyOf = (response: string) => response.slice(response.indexOf("\r\n\r\n") + 4);

let server: http.Server | undefined;
afterEach(async () => {
  const s = server;
  server = undefined;
  if (!s) return;
  s.closeAllConnections();
  await new Promise((resolve) => s.close(resolve));
});

describe("ChunkFrames", () => {
  it("frames a text as one HTTP/1.1 chunk, its size in bytes", () => {
    const frames = new ChunkFrames();
    const frame = frames.of("data: é€\n\n");
    expect(frame.toString("utf8")).toBe("d\r\ndata: é€\n\n\r\n");
    expect(frames.of("data: é€\n\n")).toBe(frame); // the next watcher's write of the same batch
    expect(frames.of("x").toString("latin1")).toBe("1\r\nx\r\n");
  });
});

describe("ResponseSink", () => {
  it("gives an HTTP/1.1 client the texts as chunks of one chunked body, closed by the end", async () => {
    let throughResponse = 0;
    server = await serve((sink, res) => {
      const write = res.write.bind(res) as (chunk: string) => boolean;
      res.write = ((chunk: string) => {
        throughResponse++;
        return write(chunk);
      }) as typeof res.write;
      sink.write("id: 1\ndata: {}\n\n");
      sink.write("id: 2\ndata: é\n\n");
      sink.end();
    });
    const response = await rawRequest(server, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(throughResponse).toBe(0); // framed here, straight to the socket
    expect(response).toMatch(/transfer-encoding: chunked/i);
    expect(Buffer.from(bodyOf(response), "latin1").toString("utf8")).toBe(
      "d\r\nretry: 1000\n\n\r\n10\r\nid: 1\ndata: {}\n\n\r\n10\r\nid: 2\ndata: é\n\n\r\n0\r\n\r\n",
    );
  });

  it("reads back as the texts written through Node's own client", async () => {
    const texts = Array.from({ length: 50 }, (_, i) => `id: ${i}\ndata: ${"ü".repeat(i)}\n\n`);
    server = await serve((sink) => {
      for (const text of texts) sink.write(text);
      sink.end();
    });
    const { port } = server.address() as AddressInfo;
    const body = await new Promise<string>((resolve, reject) => {
      http.get({ port, host: "127.0.0.1" }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve(text));
        res.on("error", reject);
      });
    });
    expect(body).toBe(`retry: 1000\n\n${texts.join("")}`);
  });

  it("writes through the response to an HTTP/1.0 client (no chunks) and to a HEAD request (no body)", async () => {
    server = await serve((sink) => {
      sink.write("id: 1\ndata: {}\n\n");
      sink.end();
    });
    const old = await rawRequest(server, "GET / HTTP/1.0\r\n\r\n");
    expect(old).not.toMatch(/transfer-encoding/i);
    expect(bodyOf(old)).toBe("retry: 1000\n\nid: 1\ndata: {}\n\n");
    const head = await rawRequest(server, "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(bodyOf(head)).toBe("");
  });

  it("tells of the socket's drain once a client that stopped reading reads again", async () => {
    let drained: () => void = () => {};
    const drain = new Promise<void>((resolve) => {
      drained = resolve;
    });
    let filled: (length: number) => void = () => {};
    const full = new Promise<number>((resolve) => {
      filled = resolve;
    });
    server = await serve((sink) => {
      const text = `data: ${"x".repeat(64 * 1024)}\n\n`;
      const fill = () => {
        // Until the socket and the kernel's buffers are full, then wait for the drain.
        if (sink.write(text) || sink.writableLength < 4 * text.length) return setImmediate(fill);
        sink.once("drain", () => {
          drained();
          sink.end();
        });
        filled(sink.writableLength);
      };
      fill();
    });
    const { port } = server.address() as AddressInfo;
    const res = await new Promise<http.IncomingMessage>((resolve) =>
      http.get({ port, host: "127.0.0.1" }, resolve),
    );
    res.pause();
    expect(await full).toBeGreaterThan(0);
    res.resume();
    await drain;
    await new Promise((resolve) => res.on("end", resolve));
  });
});
