// One controller per session, any number of observers. A client names itself with the X-Brain-Client header;
// its first driving request (prompt, steer, interrupt, answer, checkpoint, close) makes it the controller when
// no one else is, and an open event stream of the same client keeps it so. A controller with no stream open
// that has sent nothing for LEASE_MS lets go. POST /v1/sessions/{id}/control takes control outright (a person
// at another screen who means to). Requests without a client id drive the session only while no one controls it.
// A command the daemon refuses takes nothing: a claim it made is undone when it is refused (see driving()).
import { ApiError } from "./errors.js";
import { keyReused } from "./idempotency.js";
import type { KeyedSlot } from "./keyed-answers.js";

export const LEASE_MS = 30_000;

export interface Lease {
  client: string;
  lastSeen: number;
  /** Whether a command of the client was taken since it claimed control: then no refusal undoes the claim. */
  taken: boolean;
  /** Its client's commands in flight since the claim, while none was taken. */
  pending: number;
}

export class ControlLeases {
  private readonly leases = new Map<string, Lease>();
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

  /**
   * Runs `command` as `client` driving the session: claims control when no one holds it (or refuses with 409 naming
   * who does) and keeps the claim only if the command is taken. The claim is made before the command runs, so two
   * clients never drive at once (a client refused meanwhile by a claim that is then undone may simply send again);
   * a claim made after the command was taken would let another client's command run beside it.
   */
  async driving<T>(session: string, client: string | undefined, command: () => Promise<T>): Promise<T> {
    const lease = this.drive(session, client);
    let result: T;
    try {
      result = await command();
    } catch (err) {
      if (lease) this.settle(session, lease, false);
      throw err;
    }
    if (lease) this.settle(session, lease, true);
    return result;
  }

  /**
   * Lets `client` drive the session (claiming it when free), or refuses with 409 naming who controls it. Returns the
   * lease a claim not yet kept by a taken command is pending on, for driving() to settle.
   */
  drive(session: string, client: string | undefined): Lease | undefined {
    const holder = this.holder(session);
    if (holder === undefined) {
      if (!client) return undefined;
      const lease = { client, lastSeen: this.now(), taken: false, pending: 1 };
      this.leases.set(session, lease);
      return lease;
    }
    const lease = this.leases.get(session)!;
    if (holder === client) {
      lease.lastSeen = this.now();
      if (lease.taken) return undefined;
      lease.pending += 1;
      return lease;
    }
    // The control route takes the client in its body, not from the header: a bare POST is a 400 on "client".
    const take = client
      ? `{"client": ${JSON.stringify(client)}}`
      : `{"client": "ID"}, then send X-Brain-Client: ID`;
    throw new ApiError(
      "conflict",
      `session ${session} is controlled by client "${holder}"; watch it, or take control with POST /v1/sessions/${session}/control with ${take}`,
      undefined,
      { reason: "controlled", controller: holder },
    );
  }

  /** A command of the lease's claim was taken (the claim stays) or refused (the claim goes if no other kept it). */
  private settle(session: string, lease: Lease, taken: boolean): void {
    lease.pending -= 1;
    if (taken) lease.taken = true;
    // Taken over since (take(), release()) it is no longer this claim's to undo.
    if (!lease.taken && lease.pending === 0 && this.leases.get(session) === lease)
      this.leases.delete(session);
  }

  /** Makes `client` the controller whoever held it; returns the previous one (if another). */
  take(session: string, client: string): string | undefined {
    const holder = this.holder(session);
    this.leases.set(session, { client, lastSeen: this.now(), taken: true, pending: 0 });
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
