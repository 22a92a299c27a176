// The fault matrix, tool side: Brain's tool service down, slow, interrupted while a call waits, and a call
// whose arguments are too deep to log. Only families whose tool calls reach Brain's tools apply (process and
// api); ext and http agents run their own tools.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startKeyedProvider } from "../../src/harnesses/api/testing/provider.js";
import type { SessionEvent } from "../../src/protocol/events.js";
import type { ToolResult, ToolSchema } from "../../src/protocol/runner.js";
import { textOf, waitForEvent } from "../../src/testing/brain.js";
import type { FakeProvider } from "../../src/testing/fake-provider/index.js";
import type { ToolService } from "../../src/tools/tool-service.js";
import { acknowledged, auditLog, type Cell, expectWhole, note } from "./audit.js";
import { apiBed, type Bed, type BedOptions, processBed } from "./families.js";

/** A tool service the test controls: `down` throws, `delayMs` delays, `hold` waits for release or abort. */
class FaultyTool implements ToolService {
  down = false;
  delayMs = 0;
  hold = false;
  calls = 0;
  aborted = false;
  async list(): Promise<ToolSchema[]> {
    return [{ name: "flaky", description: "a tool that may fail", input_schema: { type: "object" } }];
  }
  async call(_name: string, _args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    this.calls++;
    if (this.down) throw new Error("connect ECONNREFUSED 127.0.0.1:9 (the tool service is down)");
    if (this.hold || this.delayMs) {
      await new Promise<void>((resolve) => {
        const timer = this.hold ? undefined : setTimeout(resolve, this.delayMs);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          this.aborted = true;
          resolve();
        });
      });
    }
    return { content: [{ type: "text", text: "tool says hi" }], is_error: false };
  }
}

let fake: FakeProvider;
let bed: Bed | undefined;
let tool: FaultyTool;
beforeAll(async () => {
  fake = await startKeyedProvider();
});
afterEach(async () => {
  await bed?.close();
  bed = undefined;
  fake.reset();
});
afterAll(() => fake.close());

const beds: Record<"process" | "api", (o: BedOptions, mode?: string) => Bed> = {
  process: (o, mode = "good") => processBed(mode, o, { tools: ["flaky"] }),
  api: (o) => apiBed(o, { tools: ["flaky"] }),
};

async function open(family: "process" | "api", mode?: string) {
  tool = new FaultyTool();
  bed = beds[family]({ fake, tools: [tool] }, mode);
  const session = await bed.t.brain.create({ harness: bed.harness, config: bed.config });
  return { session, ack: acknowledged(session) };
}

/** Closes the Brain, audits the log on disk, notes the numbers; returns the events. */
async function finish(cell: Cell, session: { id: string }, seen: SessionEvent[]): Promise<SessionEvent[]> {
  const file = bed!.t.store.paths(session.id).events;
  await bed!.t.brain.close();
  const audit = auditLog(file, seen);
  note(cell, { eventsLost: audit.eventsLost, secretsFound: 0 });
  expect(expectWhole(audit)).toEqual([]);
  // Every tool.result has its tool.call before it.
  const calls = new Set<string>();
  for (const e of audit.events) {
    if (e.type === "tool.call") calls.add((e.data as { id: string }).id);
    if (e.type === "tool.result") expect(calls.has((e.data as { id: string }).id)).toBe(true);
  }
  return audit.events;
}

const toolResults = (all: SessionEvent[]) =>
  all.filter((e) => e.type === "tool.result").map((e) => e.data as ToolResult & { id: string });

describe.each(["process", "api"] as const)("%s", (family) => {
  describe("tool service down", () => {
    it(family, async (cell) => {
      const { session, ack } = await open(family);
      tool.down = true;
      fake.script([{ toolCalls: [{ name: "flaky", arguments: {} }] }, { text: "carried on" }]);
      const turn = await session.prompt("use the tool");
      const outcome = await turn.settled;
      const all = await finish(cell, session, ack.seen);
      expect(outcome.status).toBe("completed");
      const [result] = toolResults(all);
      expect(result).toMatchObject({ is_error: true });
      expect(JSON.stringify(result?.content)).toMatch(/ECONNREFUSED|down/);
      expect(textOf(all, turn.turn)).toBe("carried on");
    });
  });

  describe("tool service slow", () => {
    it(family, async (cell) => {
      const { session, ack } = await open(family);
      tool.delayMs = 600;
      fake.script([{ toolCalls: [{ name: "flaky", arguments: {} }] }, { text: "waited" }]);
      const turn = await session.prompt("use the slow tool");
      const outcome = await turn.settled;
      const all = await finish(cell, session, ack.seen);
      expect(outcome.status).toBe("completed");
      expect(toolResults(all)).toMatchObject([{ is_error: false, content: [{ text: "tool says hi" }] }]);
      expect(textOf(all, turn.turn)).toBe("waited");
    });
  });

  describe("interrupt while a tool call waits", () => {
    it(family, async (cell) => {
      const { session, ack } = await open(family);
      tool.hold = true;
      fake.script([{ toolCalls: [{ name: "flaky", arguments: {} }] }]);
      const turn = await session.prompt("use the held tool");
      await waitForEvent(session, (e) => e.type === "tool.call");
      // The call is logged before it is sent to the service: interrupted before it got there, it is never sent
      // (right, but not this case), and nothing would abort it there.
      await expect.poll(() => tool.calls).toBe(1);
      await session.interrupt();
      const outcome = await turn.settled;
      const next = await (await session.prompt("after")).settled;
      const all = await finish(cell, session, ack.seen);
      expect(outcome.status).toBe("interrupted");
      expect(tool.aborted).toBe(true);
      expect(toolResults(all)).toMatchObject([{ is_error: true }]);
      expect(next.status).toBe("completed");
    });
  });

  describe("tool call arguments too deep to log", () => {
    // The api harness's SDK refuses such a call before anyone runs it (the turn fails, nothing logged): whole.
    it(family, async (cell) => {
      // The scripted runner sends its deep call itself; the api harness gets it from the model.
      const { session, ack } = await open(family, "deep-tool-args");
      const depth = 5_000;
      const argumentsJson = `${'{"d":'.repeat(depth)}1${"}".repeat(depth)}`;
      fake.script([{ toolCalls: [{ name: "flaky", arguments: {}, argumentsJson }] }, { text: "after deep" }]);
      const outcome = await (await session.prompt("deep")).settled;
      const all = await finish(cell, session, ack.seen);
      expect(["completed", "failed"]).toContain(outcome.status);
      const logged = all.filter((e) => e.type === "tool.call").length;
      // Every result has its call (checked in finish), or neither happened and the tool never ran.
      if (logged === 0) expect(tool.calls).toBe(0);
      expect(toolResults(all).length).toBe(logged);
    });
  });
});
