// The sockets one credential proxy (./credential-proxy.ts) holds. It runs in the daemon every tenant shares, so
// nothing an agent does may hold the daemon's file descriptors without end. Node's server alone let a connection
// that sends nothing, or a request head a byte at a time, hold its socket until its headersTimeout (60 s, checked
// every 30 s: up to 90 s measured), whether it was under the cap or past it, and past it there was no bound on how
// many: an agent could open sockets faster than they were let go. Here each connection has HEADERS_WAIT_MS to send
// each request's head, and the ones past the cap waiting to be told so are capped as well.
import type { Socket } from "node:net";

/**
 * Connections one proxy serves at once. A CLI holds a few: its turn's stream, a subagent's, a token count; the cap
 * leaves room for many parallel subagents. A request on one accepted past it gets a 429 that names the cap.
 */
export const MAX_CONNECTIONS = 64;

/**
 * How long a connection may go without a request's head, from its opening or its last answer's end: a CLI sends its
 * head as soon as it connects, and Node closes a kept-alive connection left idle after 5 s (keepAliveTimeout).
 */
export const HEADERS_WAIT_MS = 10_000;

/**
 * Arms a timer: `fire` runs unless the returned disarm is called first. A test passes its own, to fire it when what
 * it waits for has stalled, instead of waiting the time out.
 */
export type ProxyTimer = (fire: () => void) => () => void;

/** A ProxyTimer that fires after `ms`. */
export function after(ms: number): ProxyTimer {
  return (fire) => {
    const timer = setTimeout(fire, ms);
    timer.unref();
    return () => clearTimeout(timer);
  };
}

interface Held {
  /** Requests begun on the connection and not yet answered (a client may pipeline). */
  open: number;
  /** Disarms the wait for the next request's head; a no-op while a request is open. */
  disarm: () => void;
}

export class ProxyConnections {
  private readonly held = new Map<Socket, Held>();
  /**
   * Connections past the cap, waiting for the head their 429 answers. As many as the cap: past that, one is closed
   * at once, so the proxy never holds more than twice the cap.
   */
  private readonly refusing = new Map<Socket, Held>();

  constructor(private readonly headersWait: ProxyTimer = after(HEADERS_WAIT_MS)) {}

  accepted(socket: Socket): void {
    const into = this.held.size < MAX_CONNECTIONS ? this.held : this.refusing;
    if (into === this.refusing && this.refusing.size >= MAX_CONNECTIONS) return void socket.destroy();
    const held: Held = { open: 0, disarm: () => {} };
    into.set(socket, held);
    this.wait(socket, held);
    socket.once("close", () => {
      held.disarm();
      into.delete(socket);
    });
  }

  /**
   * A request's head came on `socket`: no wait runs until it is answered (`answered`). False when the connection
   * is past the cap, and the request is to be refused.
   */
  began(socket: Socket): boolean {
    const held = this.held.get(socket) ?? this.refusing.get(socket);
    if (held) {
      held.open++;
      held.disarm();
    }
    return this.held.has(socket);
  }

  /** The answer to a request on `socket` has ended; with none left open, the wait for the next head starts. */
  answered(socket: Socket): void {
    const held = this.held.get(socket) ?? this.refusing.get(socket);
    if (!held || --held.open > 0 || socket.destroyed) return;
    this.wait(socket, held);
  }

  private wait(socket: Socket, held: Held): void {
    held.disarm = this.headersWait(() => socket.destroy());
  }
}
