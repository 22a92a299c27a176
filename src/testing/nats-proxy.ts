// A TCP proxy in front of a NATS server that can hold a client's publishes to the events stream: a publish
// delayed in the network (or by a stalled stream leader) past its timeout, and stored later after all.
import net from "node:net";
import { freePort } from "../core/free-port.js";

export interface NatsProxy {
  /** `nats://127.0.0.1:<port>`: connect a client here (with ignoreClusterUpdates, so it stays on the proxy). */
  readonly url: string;
  /** From now on, publishes to `<prefix>.ev.*` are held, not sent. */
  hold(): void;
  /** Publishes pass again; the held ones are sent first, now, or (`onNext`) right before the next one. */
  release(options?: { onNext?: boolean }): void;
  /** The held publishes are lost (as in a network partition), and publishes pass again. */
  drop(): void;
  /** How many publishes are held now. */
  readonly held: number;
  close(): Promise<void>;
}

const EVENTS_SUBJECT = /^[A-Za-z0-9_-]+\.ev\./;

export async function startNatsProxy(target: { host: string; port: number }): Promise<NatsProxy> {
  const port = await freePort();
  let mode: "pass" | "hold" | "release-on-next" = "pass";
  let held: { frame: Buffer; up: net.Socket }[] = [];
  const sockets = new Set<net.Socket>();
  const flush = () => {
    for (const h of held) h.up.write(h.frame);
    held = [];
  };
  const server = net.createServer((client) => {
    const up = net.connect(target.port, target.host);
    for (const s of [client, up]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    }
    up.on("data", (d) => client.write(d));
    up.on("error", () => client.destroy());
    client.on("error", () => up.destroy());
    up.on("close", () => client.destroy());
    client.on("close", () => up.destroy());
    let buf = Buffer.alloc(0);
    client.on("data", (d) => {
      buf = Buffer.concat([buf, d]);
      // Client protocol lines; PUB and HPUB carry a payload whose size is their last field.
      for (;;) {
        const nl = buf.indexOf("\r\n");
        if (nl < 0) return;
        const parts = buf.subarray(0, nl).toString().split(" ");
        const op = parts[0]!.toUpperCase();
        const isPub = op === "PUB" || op === "HPUB";
        const len = isPub ? nl + 2 + Number(parts[parts.length - 1]) + 2 : nl + 2;
        if (buf.length < len) return;
        const frame = Buffer.from(buf.subarray(0, len));
        buf = buf.subarray(len);
        if (isPub && EVENTS_SUBJECT.test(parts[1] ?? "")) {
          if (mode === "hold") {
            held.push({ frame, up });
            continue;
          }
          if (mode === "release-on-next") {
            mode = "pass";
            flush();
          }
        }
        up.write(frame);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `nats://127.0.0.1:${port}`,
    hold: () => {
      mode = "hold";
    },
    release: (options = {}) => {
      if (options.onNext) {
        mode = "release-on-next";
        return;
      }
      mode = "pass";
      flush();
    },
    drop: () => {
      held = [];
      mode = "pass";
    },
    get held() {
      return held.length;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
