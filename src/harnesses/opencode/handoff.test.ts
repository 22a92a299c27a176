// A handoff from the real pi CLI to the real opencode, against the fake provider: opencode imports the seeded
// export, and its first model request carries every earlier prompt, assistant text and tool result.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { historyOf } from "../../testing/cli.js";
import { type HandoffBed, handoffBed } from "../../testing/handoff-bed.js";
import { locateCli } from "../cli/locate.js";
import { PiCliFactory } from "../pi-cli/factory.js";
import { OpencodeFactory } from "./factory.js";

vi.setConfig({ testTimeout: 400_000, hookTimeout: 60_000 });

const found = locateCli("opencode") && locateCli("pi");
let bed: HandoffBed | undefined;
afterEach(async () => {
  await bed?.close();
  bed = undefined;
});

describe.runIf(found)("handoff to opencode", () => {
  it("pi-cli → opencode: opencode's first request holds pi's turns, its bash call kept as text", async () => {
    bed = await handoffBed(
      (launcher) => [new PiCliFactory({ launcher }), new OpencodeFactory({ launcher })],
      "/v1",
    );
    const source = await bed.t.brain.create({ harness: "pi-cli", config: { model: "fake-model" } });
    await source.start();
    writeFileSync(join(bed.t.store.paths(source.id).native, "work", "marker.txt"), "x");
    expect((await (await source.prompt("List the files here")).settled).status).toBe("completed");
    const moved = await bed.t.brain.handoff(source.id, { to: "opencode" });
    expect((await bed.t.brain.record(moved.id)).seeded?.how).toBe("native");
    const before = bed.sandbox.provider.requests.length;
    expect((await (await moved.prompt("NOTOOL and now?")).settled).status).toBe("completed");
    const request = bed.since(before).find((r) => JSON.stringify(r.body).includes("NOTOOL and now?"))!;
    const history = historyOf(request);
    for (const text of ["List the files here", "Let me look.", "marker.txt", "done"])
      expect(history).toContain(text);
    expect(history).toContain("[Called tool bash with");
  });
});
