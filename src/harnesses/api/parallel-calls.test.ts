// The api harness's parallel tool calls: one answer may hold any number of them, and they run as many at once as a
// runner's may (seed A), the rest waiting for a place.
import { describe, expect, it } from "vitest";
import type { ToolService } from "../../core/tools.js";
import type { ToolResult, ToolSchema } from "../../protocol/runner.js";
import { events } from "../../testing/brain.js";
import { MAX_TOOL_CALLS_IN_FLIGHT } from "../process/call-places.js";
import { apiTestBed } from "./testing/bed.js";

/**
 * Holds every call it gets until the event loop's next turn, and counts how many it held at once: the calls a
 * step started together all reach it before then (they wait on one log commit).
 */
class CrowdTool implements ToolService {
  private running = 0;
  most = 0;
  private readonly held: (() => void)[] = [];

  async list(): Promise<ToolSchema[]> {
    return [{ name: "crowd", description: "waits a moment", input_schema: { type: "object" } }];
  }

  call(): Promise<ToolResult> {
    this.running++;
    this.most = Math.max(this.most, this.running);
    return new Promise((resolve) => {
      this.held.push(() => {
        this.running--;
        resolve({ content: [{ type: "text", text: "done" }], is_error: false });
      });
      if (this.held.length === 1) setImmediate(() => this.releaseAll());
    });
  }

  private releaseAll(): void {
    for (const release of this.held.splice(0)) release();
  }
}

const bed = apiTestBed();

describe("an answer with more tool calls than may run at once", () => {
  it("runs them a bounded number at a time, and answers every one", async () => {
    const crowd = new CrowdTool();
    const session = await bed.brain({ tools: [crowd] }).brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", tools: ["crowd"] },
    });
    const calls = 2 * MAX_TOOL_CALLS_IN_FLIGHT + 1;
    bed.fake.script([
      { toolCalls: Array.from({ length: calls }, () => ({ name: "crowd", arguments: {} })) },
      { text: "all done" },
    ]);
    expect((await (await session.prompt("go")).settled).status).toBe("completed");
    expect(crowd.most).toBeLessThanOrEqual(MAX_TOOL_CALLS_IN_FLIGHT);
    const results = (await events(session)).filter((e) => e.type === "tool.result");
    expect(results).toHaveLength(calls);
    const replies = bed.fake.requests[1]!.body.messages[2].content as { content: string }[];
    expect(replies.map((reply) => reply.content)).toEqual(Array(calls).fill("done"));
  });
});
