// A handoff from the real pi CLI to the real opencode, and an opencode rebuild, against the fake provider:
// opencode imports the seeded export, and its first model request carries every earlier prompt, assistant text
// and tool result.
import { rmSync, writeFileSync } from "node:fs";
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

  it("opencode rebuild: a lost database is rewritten from the log; the next turn carries the history", async () => {
    bed = await handoffBed((launcher) => [new OpencodeFactory({ launcher })], "/v1");
    const source = await bed.t.brain.create({ harness: "opencode", config: { model: "fake-model" } });
    expect((await (await source.prompt("NOTOOL remember FIG")).settled).status).toBe("completed");
    const t = await bed.restart();
    const native = t.store.paths(source.id).native;
    rmSync(join(native, "opencode/data"), { recursive: true, force: true });
    rmSync(join(native, "opencode-session.json"), { force: true });
    const lost = await (await (await t.brain.session(source.id)).prompt("NOTOOL one")).settled;
    expect(lost.error?.message).toMatch(/opencode session ses_\w+ .* is missing/);
    expect((await t.brain.rebuild(source.id)).seeded.how).toBe("native");
    const before = bed.sandbox.provider.requests.length;
    const again = await t.brain.session(source.id);
    expect((await (await again.prompt("NOTOOL two")).settled).status).toBe("completed");
    const request = bed.since(before).find((r) => JSON.stringify(r.body).includes("NOTOOL two"))!;
    expect(historyOf(request)).toContain("NOTOOL remember FIG");
    expect(historyOf(request)).toContain("hello from fake");
  });
});
