// Brain's JSON-RPC reader (the one it reads extension hosts with, and sdk/ts/nui's hosts read Brain with) against
// the shared wire fixtures: the SDKs' tests hold them to the same lines (test/sdk/wire-fixtures.test.ts,
// sdk/python/tests/test_wire_fixtures.py).
import { describe, expect, it } from "vitest";
import { wireCases } from "../testing/wire-fixtures.js";
import { type RpcId, RpcPeer } from "./jsonrpc.js";
import { FramingError } from "./ndjson.js";

describe("Brain's JSON-RPC reader on the shared wire fixtures", () => {
  for (const wire of wireCases()) {
    it(wire.name, () => {
      const answered: RpcId[] = [];
      const peer = new RpcPeer(() => {}, {
        onNotification: () => {},
        onRequest: (id, method) => {
          if (method === "harness.info") answered.push(id);
        },
        onWarning: () => {},
      });
      let ended = false;
      for (const chunk of wire.chunks) {
        try {
          peer.feed(chunk);
        } catch (err) {
          if (!(err instanceof FramingError)) throw err;
          ended = true;
          break;
        }
      }
      expect({ answered, ended }).toEqual({ answered: wire.answered, ended: wire.ended });
    });
  }
});
