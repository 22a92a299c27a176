// The TypeScript nui SDK's host (sdk/ts/nui) on the shared wire fixtures, fed over in-memory stdio one chunk at a
// time: it answers the lines Brain's reader takes (src/protocol/wire-fixtures.test.ts) and the Python SDK's
// (sdk/python/tests/test_wire_fixtures.py), and stops reading at a line over the cap.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { NuiAgent } from "../../sdk/ts/nui/index.js";
import { eventCases, wireCases } from "../../src/testing/wire-fixtures.js";

class Quiet extends NuiAgent {
  override name = "quiet";
  async *run() {}
}

/** The ids of the replies written, once the host has read all its input (or stopped reading it). */
async function answeredIds(chunks: Buffer[]): Promise<{ answered: unknown[]; ended: boolean }> {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = "";
  output.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  const served = new Quiet().serveStdio(input, output);
  for (const chunk of chunks) input.write(chunk);
  // A marker after the case's input: a host still reading answers it; one that stopped never does.
  input.write(`${JSON.stringify({ jsonrpc: "2.0", id: "marker", method: "harness.info" })}\n`);
  input.end();
  await served;
  const ids = text
    .split("\n")
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { id: unknown }).id);
  const ended = ids.at(-1) !== "marker";
  return { answered: ended ? ids : ids.slice(0, -1), ended };
}

describe("TypeScript nui SDK on the shared wire fixtures", () => {
  for (const wire of wireCases()) {
    it(wire.name, async () => {
      expect(await answeredIds(wire.chunks)).toEqual({ answered: wire.answered, ended: wire.ended });
    });
  }
});

/** The harness.event lines the host writes for one run of an agent that yields `yields`, as Brain parses them. */
async function sentFor(yields: Record<string, unknown>[]): Promise<{ events: unknown[]; longest: number }> {
  class Yielding extends NuiAgent {
    override name = "yielding";
    async *run() {
      for (const event of yields) yield event as never;
    }
  }
  const input = new PassThrough();
  const output = new PassThrough();
  let text = "";
  output.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  const served = new Yielding().serveStdio(input, output);
  const replied = new Promise<void>((resolve) =>
    output.on("data", () => text.includes('"id":"run"') && resolve()),
  );
  input.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: "run", method: "harness.run", params: { message: "m", runId: "r" } })}\n`,
  );
  await replied;
  input.end();
  await served;
  const lines = text.split("\n").filter(Boolean);
  const events = lines
    .map((line) => JSON.parse(line) as { method?: string; params?: Record<string, unknown> })
    .filter((m) => m.method === "harness.event")
    .map(({ params }) => {
      const { runId: _, ...event } = params ?? {};
      return event;
    });
  return { events, longest: Math.max(...lines.map((line) => Buffer.byteLength(line))) };
}

describe("TypeScript nui SDK: the events it writes, on the shared fixtures", () => {
  for (const wire of eventCases()) {
    it(wire.name, async () => {
      const { events, longest } = await sentFor(wire.yields);
      if (wire.sent) expect(events).toEqual(wire.sent);
      else {
        const texts = events.filter((e) => (e as { type?: string }).type === "text");
        expect(texts.map((e) => (e as { content: string }).content).join("")).toBe(wire.joined);
      }
      expect(longest).toBeLessThanOrEqual(4 << 20);
    });
  }
});

describe("TypeScript nui SDK over TCP on the shared wire fixtures", () => {
  for (const wire of wireCases()) {
    it(wire.name, async () => {
      const dir = mkdtempSync(join(tmpdir(), "brain-sdk-wire-"));
      const serving = await new Quiet().serveTcp({ connectionsDir: dir, connectionId: "quiet" });
      try {
        const { token } = JSON.parse(readFileSync(serving.path, "utf8")) as { token: string };
        const socket = connect(serving.port, "127.0.0.1");
        let text = "";
        socket.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        socket.on("error", () => {});
        const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
        const auth = { jsonrpc: "2.0", id: "auth", method: "harness.authenticate", params: { token } };
        socket.write(`${JSON.stringify(auth)}\n`);
        for (const chunk of wire.chunks) socket.write(chunk);
        // A marker after the case's input, then the shutdown: a host still reading answers both, and closes.
        socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: "marker", method: "harness.info" })}\n`);
        socket.end();
        await closed;
        const ids = text
          .split("\n")
          .filter(Boolean)
          .map((line) => (JSON.parse(line) as { id: unknown }).id);
        expect(ids[0]).toBe("auth");
        const ended = ids.at(-1) !== "marker";
        expect({ answered: ids.slice(1, ended ? undefined : -1), ended }).toEqual({
          answered: wire.answered,
          ended: wire.ended,
        });
      } finally {
        await serving.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
