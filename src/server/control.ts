// One controller per session, any number of observers. A client names itself with the X-Brain-Client header;
// its first driving request (prompt, steer, interrupt, answer, checkpoint, close) makes it the controller when
// no one else is, and an open event stream of the same client keeps it so. A controller with no stream open
// that has sent nothing for LEASE_MS lets go. POST /v1/sessions/{id}/control takes control outright (a person
// at another screen who means to). Requests without a client id drive the session only while no one controls it.
import { ApiError } from "./errors.js";
import { keyReused } from "./idempotency.js";
import type { KeyedSlot } from "./keyed-answers.js";

export const LEASE_MS = 30_000;

export class ControlLeases {
  private readonly leases = new Map<string, { client: string; lastSeen: number }>();
  /** session → client → open streams. */
  private readonly streams = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  holder(session: string): string | undefined {
    const lease = this.leases.get(session);
    if (!lease) return undefined;
    const watching = (this.streams.get(session)?.get(lease.client) ?? 0) > 0;
    if (!watching && this.now() - lease.lastSeen > LEASE_MS) {
      this.leases.delete(session);
      return undefined;
    }
    return lease.client;
  }

  /** Lets `client` drive the session (claiming it when free), or refuses with 409 naming who controls it. */
  drive(session: string, client: string | undefined): void {
    const holder = this.holder(session);
    if (holder === undefined) {
      if (client) this.leases.set(session, { client, lastSeen: this.now() });
      return;
    }
    if (holder === client) {
      this.leases.set(session, { client, lastSeen: this.now() });
      return;
    }
    // The control route takes the client in its body, not from the header: a bare POST is a 400 on "client".
    const take = client
      ? `{"client": ${JSON.stringify(client)}}`
      : `{"client": "ID"}, then send X-Brain-Client: ID`;
    throw new ApiError(
      "conflict",
      `session ${session} is controlled by client "${holder}"; watch it, or take control with POST /v1/sessions/${session}/control with ${take}`,
    );
  }

  /** Makes `client` the controller whoever held it; returns the previous one (if another). */
  take(session: string, client: string): string | undefined {
    const holder = this.holder(session);
    this.leases.set(session, { client, lastSeen: this.now() });
    return holder === client ? undefined : holder;
  }

  release(session: string): void {
    this.leases.delete(session);
    this.streams.delete(session);
  }

  /** A stream of `client` opened; call the returned function when it closes. */
  streamOpened(session: string, client: string): () => void {
    let clients = this.streams.get(session);
    if (!clients) {
      clients = new Map();
      this.streams.set(session, clients);
    }
    clients.set(client, (clients.get(client) ?? 0) + 1);
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      const count = (clients.get(client) ?? 1) - 1;
      if (count > 0) clients.set(client, count);
      else clients.delete(client);
      if (clients.size === 0 && this.streams.get(session) === clients) this.streams.delete(session);
      const lease = this.leases.get(session);
      if (lease?.client === client) lease.lastSeen = this.now();
    };
  }
}

/**
 * The refusal of a take's key sent again for another client (KeyedAnswers.once keeps each keyed take's client as
 * what it sent): a retry of a take sends the same client.
 */
export const takenForAnother = ({ key, session }: KeyedSlot, first: string) =>
  keyReused(
    key!,
    `its first request took control of session ${session} for another client, "${first}"`,
    "take",
  );
