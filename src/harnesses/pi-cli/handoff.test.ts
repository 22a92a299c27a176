// Handoffs between the api harness and the real pi CLI, and a pi rebuild, against the fake provider: the first
// model request of the new (or rebuilt) session carries every earlier prompt, assistant text and tool result.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { events } from "../../testing/brain.js";
import { historyOf } from "../../testing/cli.js";
import { useHandoffBed } from "../../testing/handoff-bed.js";
import { ApiHarnessFactory } from "../api/factory.js";
import { locateCli } from "../cli/locate.js";
import { PiCliFactory } from "./factory.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const found = locateCli("pi");
const start = useHandoffBed((launcher) => [new ApiHarnessFactory(), new PiCliFactory({ launcher })], "/v1");

const API_MODEL = "openai-chat:fake-model";

function carries(history: string, texts: string[]) {
  for (const text of texts) expect(history).toContain(text);
}

describe.runIf(found)("handoff between api and pi-cli", () => {
  it("pi-cli → api: the api harness's first request holds pi's turns, its bash call carried as text", async () => {
    const b = await start();
    const source = await b.t.brain.create({ harness: "pi-cli", config: { model: "fake-model" } });
    await source.start();
    const work = join(b.t.store.paths(source.id).native, "work");
    writeFileSync(join(work, "marker.txt"), "x");
    expect((await (await source.prompt("List the files here")).settled).status).toBe("completed");
    expect((await (await source.prompt("NOTOOL say hi")).settled).status).toBe("completed");
    const moved = await b.t.brain.handoff(source.id, { to: "api", model: API_MODEL });
    expect((await b.t.brain.record(moved.id)).seeded?.how).toBe("native");
    const before = b.sandbox.provider.requests.length;
    expect((await (await moved.prompt("NOTOOL and now?")).settled).status).toBe("completed");
    const history = historyOf(b.since(before)[0]!);
    carries(history, [
      "List the files here",
      "Let me look.",
      "marker.txt",
      "done",
      "NOTOOL say hi",
      "hello from fake",
    ]);
    expect(history).toContain("[Called tool bash with");
  });

  it("api → pi-cli: pi's first request holds the api turns, the bound tool's call carried as text", async () => {
    const b = await start();
    const source = await b.t.brain.create({ harness: "api", config: { model: API_MODEL, tools: ["echo"] } });
    b.sandbox.provider.script([
      {
        text: "Calling echo.",
        toolCalls: [{ id: "call_1", name: "echo", arguments: { value: "PAPAYA-42" } }],
      },
      { text: "echo said PAPAYA-42" },
    ]);
    expect((await (await source.prompt("first: echo something")).settled).status).toBe("completed");
    const moved = await b.t.brain.handoff(source.id, { to: "pi-cli", model: "fake-model" });
    expect((await b.t.brain.record(moved.id)).config).toEqual({ model: "fake-model", tools: ["echo"] });
    const before = b.sandbox.provider.requests.length;
    const next = await (await moved.prompt("NOTOOL go on")).settled;
    expect(next, JSON.stringify((await events(moved)).slice(-3))).toMatchObject({ status: "completed" });
    const history = historyOf(b.since(before)[0]!);
    carries(history, [
      "first: echo something",
      "Calling echo.",
      "PAPAYA-42",
      "echo said PAPAYA-42",
      "NOTOOL go on",
    ]);
  });

  it("pi-cli rebuild: a lost session file is rewritten from the log and the next turn carries the history", async () => {
    const b = await start();
    const source = await b.t.brain.create({ harness: "pi-cli", config: { model: "fake-model" } });
    expect((await (await source.prompt("List the files here")).settled).status).toBe("completed");
    const t = await b.restart();
    rmSync(join(t.store.paths(source.id).native, "pi/sessions"), { recursive: true, force: true });
    const lost = await (await (await t.brain.session(source.id)).prompt("NOTOOL one")).settled;
    expect(lost.error?.message).toMatch(/pi session file .* is missing/);
    await t.brain.rebuild(source.id);
    const before = b.sandbox.provider.requests.length;
    const again = await t.brain.session(source.id);
    expect((await (await again.prompt("NOTOOL two")).settled).status).toBe("completed");
    const history = historyOf(b.since(before)[0]!);
    carries(history, ["List the files here", "Let me look.", '"role":"tool"', "NOTOOL two"]);
  });
});
