// Brain's JSON-RPC reader (the one it reads extension hosts with, and sdk/ts/nui's hosts read Brain with) against
// the shared wire fixtures: the SDKs' tests hold them to the same lines (test/sdk/wire-fixtures.test.ts,
// sdk/python/tests/test_wire_fixtures.py).
import { describe, expect, it } from "vitest";
import { frameCases, wireCases } from "../testing/wire-fixtures.js";
import { decodeBrainFrameFast } from "./fast-brain-frames.js";
import { decodeBrainFrame, decodeRunnerFrame } from "./frames.js";
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

/** What `decode` makes of a line: what it keeps, or its refusal's message. */
function outcome(decode: (line: string) => unknown, line: string): { kept: unknown } | { refused: string } {
  try {
    return { kept: decode(line) };
  } catch (err) {
    return { refused: (err as Error).message };
  }
}

describe("runner frames on the shared wire fixtures", () => {
  const { fromRunner, toRunner } = frameCases();
  for (const wire of fromRunner) {
    it(`Brain reads a runner's: ${wire.name}`, () => {
      const got = outcome(decodeRunnerFrame, wire.line);
      if (wire.refused === undefined) expect(got).toEqual({ kept: wire.kept });
      else expect(got).toEqual({ refused: expect.stringContaining(wire.refused) });
    });
  }
  for (const wire of toRunner) {
    it(`the runner SDK reads Brain's: ${wire.name}`, () => {
      const got = outcome(decodeBrainFrame, wire.line);
      if (wire.refused === undefined) {
        expect(got).toEqual({ kept: wire.kept });
        // The SDK's hot path takes it as the reference does, or leaves it to the reference.
        const fast = decodeBrainFrameFast(wire.line);
        if (fast !== undefined) expect(fast).toEqual(wire.kept);
      } else {
        expect(got).toEqual({ refused: expect.stringContaining(wire.refused) });
        expect(decodeBrainFrameFast(wire.line)).toBeUndefined();
      }
    });
  }
});
