// An HTTP proxy between `brain acp` and a test daemon that holds back the POSTs to one kind of route until the test
// lets them go: so that the daemon gets a prompt or an interrupt only after what the test makes happen first.
import { createServer, request } from "node:http";

export interface HoldingProxy {
  /** The proxy's URL, for `brain acp --server`. */
  url: string;
  /** The requests held back, each forwarded to the daemon when called. */
  held: (() => void)[];
  close(): void;
}

/** A proxy to `target` that holds back every POST whose path ends in `suffix` (e.g. "/prompt"). */
export async function holdingProxy(target: string, suffix: string): Promise<HoldingProxy> {
  const daemon = new URL(target);
  const held: (() => void)[] = [];
  const proxy = createServer((req, res) => {
    const forward = () => {
      const out = request(
        {
          host: daemon.hostname,
          port: daemon.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(out);
    };
    if (req.method === "POST" && req.url?.endsWith(suffix)) held.push(forward);
    else forward();
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const port = (proxy.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    held,
    close() {
      proxy.closeAllConnections();
      proxy.close();
    },
  };
}
