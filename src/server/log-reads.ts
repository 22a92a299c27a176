// GET /v1/sessions/{id}/log answers a page of events (up to PAGE_BYTES, 16 MiB, of them) as one JSON body, which
// the daemon holds, events and text, until its client has read it. A client that asks and never reads made it
// hold tens of MiB per request for as long as the connection stayed open: one tenant's few dozen such requests
// took gigabytes every other tenant needs. So each tenant may have only so many answers on their way at once.
import type { ServerResponse } from "node:http";
import { TenantBound } from "./tenant-bound.js";

/** Log pages one tenant may have on their way to its clients at once (each up to PAGE_BYTES of events). */
export const LOG_READS_PER_TENANT = 8;

export class LogReads {
  private readonly bound: TenantBound;

  constructor(maxPerTenant = LOG_READS_PER_TENANT) {
    this.bound = new TenantBound(
      maxPerTenant,
      (tenant, held) =>
        `tenant "${tenant}" has ${held} answers of GET /v1/sessions/{id}/log on their way, its limit: read them (or close their connections) and ask again`,
    );
  }

  /**
   * Counts a read of `tenant` until `response` closes (its answer sent, or its client gone), or refuses it with
   * 429 when the tenant has the most on their way. Without a response (a command another node forwarded, whose
   * answer is passed on whole) nothing is counted.
   */
  begin(tenant: string, response: ServerResponse | undefined): void {
    // A client gone already: its response closed, and would never say so again.
    if (!response || response.destroyed) return;
    response.once("close", this.bound.take(tenant));
  }
}
