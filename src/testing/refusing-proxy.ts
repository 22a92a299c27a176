// An HTTP proxy between `brain acp` and a real daemon that, once told to, cuts the event streams open through it and
// answers every later GET of a session's events with a given error status and a daemon-shaped body: a daemon that
// is up but refuses the stream (a 503 while it starts, a 404 for a session gone), which a real daemon cannot be made
// to answer for as long as a test needs; or that takes connections and answers nothing (hung). Everything else goes
// through to the daemon as it is.
import type { ServerResponse } from "node:http";
import { createServer, request } from "node:http";

export interface RefusingProxy {
  /** The proxy's URL, for `brain acp --server`. */
  url: string;
  /** From now on, event streams are refused with `status` and this error; the open ones are cut. */
  refuseStreams(status: number, error: { code: string; message: string }): void;
  /** Event streams go through again. */
  passStreams(): void;
  /** From now on it takes each connection and answers nothing (a hung daemon); the open streams are cut. */
  hang(): void;
  /** It answers again (what it held stays unanswered). */
  wake(): void;
  /** The method and path of each request it held unanswered. */
  held: string[];
  /** How many event stream requests it refused. */
  refused(): number;
  close(): void;
}

export async function refusingProxy(target: string): Promise<RefusingProxy> {
  const daemon = new URL(target);
  let refusal: { status: number; body: string } | undefined;
  let refusedCount = 0;
  let hung = false;
  const held: string[] = [];
  const streams = new Set<ServerResponse>();
  const proxy = createServer((req, res) => {
    if (hung) {
      held.push(`${req.method} ${req.url}`);
      return;
    }
    const isStream = req.method === "GET" && /^\/v1\/sessions\/[^/]+\/events/.test(req.url ?? "");
    if (isStream && refusal) {
      refusedCount += 1;
      res.writeHead(refusal.status, { "content-type": "application/json" }).end(refusal.body);
      return;
    }
    const out = request(
      { host: daemon.hostname, port: daemon.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    if (isStream) {
      streams.add(res);
      res.on("close", () => streams.delete(res));
    }
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const port = (proxy.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    refuseStreams(status, error) {
      refusal = { status, body: JSON.stringify({ error }) };
      for (const stream of streams) stream.destroy();
    },
    passStreams() {
      refusal = undefined;
    },
    hang() {
      hung = true;
      for (const stream of streams) stream.destroy();
    },
    wake() {
      hung = false;
    },
    held,
    refused: () => refusedCount,
    close() {
      proxy.closeAllConnections();
      proxy.close();
    },
  };
}
