// Fuzzing the JSON-RPC codecs Brain reads third-party programs through: extension hosts (src/harnesses/ext,
// RpcPeer over decodeRpcLine, then the harness events inside harness.event notifications) and `codex
// app-server` (src/harnesses/codex, RpcConnection and the notification mapper). No schema in schema/ covers
// these, so the property is the protocol-error rule: bad input becomes a warning or a rejected request
// (RpcError / HarnessError), never an exception out of the codec.
import { describe, expect, it } from "vitest";
import { HarnessError } from "../../src/core/harness.js";
import { CodexNotificationMapper } from "../../src/harnesses/codex/parser.js";
import { RpcConnection } from "../../src/harnesses/codex/rpc.js";
import { hostPeer } from "../../src/harnesses/ext/rpc-peer.js";
import { RpcError, type RpcPeer } from "../../src/protocol/jsonrpc.js";
import { FramingError } from "../../src/protocol/ndjson.js";
import { decodeHarnessEvent } from "../../src/protocol/nui/harness-event.js";
import { chunks, corpus, inputs, Prng, repro, SEED } from "./fuzz.js";

/** Requests in flight with ids 1..n, so fuzzed responses find someone waiting; collects how each ended. */
function pendingRequests(request: (method: string) => Promise<unknown>, n: number, bad: string[]): void {
  for (let i = 0; i < n; i++) {
    request(`m${i}`).catch((err: unknown) => {
      if (!(err instanceof RpcError || err instanceof HarnessError))
        bad.push(`request rejected with ${(err as Error)?.name}: ${(err as Error)?.message}`);
    });
  }
}

describe("fuzz: JSON-RPC, extension hosts", () => {
  it("codec", async () => {
    const rng = new Prng(SEED);
    const crashes: string[] = [];
    const warnings: string[] = [];
    let peer: RpcPeer | undefined;
    let fed = 0;
    for (const line of inputs(rng, corpus("jsonrpc.ndjson"))) {
      // A fresh peer every 50 lines, with requests waiting for answers.
      if (fed++ % 50 === 0) {
        peer?.fail(new HarnessError("brain_error", "next peer"));
        peer = hostPeer(() => {}, {
          onNotification: (_method, params) => {
            const event = (params as { event?: unknown } | null)?.event;
            if (event !== undefined) decodeHarnessEvent(event);
          },
          onWarning: (message) => warnings.push(message),
        });
        pendingRequests((m) => peer!.request(m, {}), 8, crashes);
      }
      try {
        for (const chunk of chunks(rng, Buffer.from(`${line}\n`, "utf8"))) peer!.feed(chunk);
      } catch (err) {
        if (!(err instanceof FramingError))
          crashes.push(repro(`${(err as Error).name}: ${(err as Error).message}`, line));
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(crashes.slice(0, 5)).toEqual([]);
    expect(warnings.length).toBeGreaterThan(0);
  });
});

describe("fuzz: JSON-RPC, codex app-server", () => {
  it("codec", async () => {
    const rng = new Prng(SEED + 1);
    const crashes: string[] = [];
    const mapper = new CodexNotificationMapper();
    let rpc: RpcConnection | undefined;
    let fed = 0;
    for (const line of inputs(rng, corpus("jsonrpc.ndjson"))) {
      if (fed++ % 50 === 0) {
        rpc?.failAll(new HarnessError("brain_error", "next connection"));
        rpc = new RpcConnection("codex", () => {}, {
          onNotification: (method, params) => void mapper.handle(method, params),
          onRequest: () => {},
        });
        // Method names outside the typed table: the fuzzed replies are what matter, not the requests.
        const untyped = rpc as unknown as { request(m: string, p: unknown): Promise<unknown> };
        pendingRequests((m) => untyped.request(m, {}), 8, crashes);
      }
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue; // the harness kills a codex that writes non-JSON (checked in codex.test.ts)
      }
      try {
        rpc!.handle(value);
      } catch (err) {
        crashes.push(repro(`${(err as Error).name}: ${(err as Error).message}`, line));
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(crashes.slice(0, 5)).toEqual([]);
  });
});
