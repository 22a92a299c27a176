// Brain reads an extension host's lines up to the 4 MiB frame cap: the TypeScript SDK keeps every line it writes
// under it, so an agent's long text reaches the session instead of breaking the host.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, tempDir, textOf } from "../../testing/brain.js";
import { catalogFactories, tsAgent, writeExtension } from "../../testing/nui.js";
import { installExtension } from "./install.js";

const dirs: string[] = [];
let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  dirs.push(dir);
  return dir;
}

it.each(["stdio", "tcp"] as const)(
  "a text chunk over 4 MiB from an agent on sdk/ts reaches the session whole (%s)",
  async (transport) => {
    const home = scratch("brain-ext-home-");
    const source = writeExtension(scratch("brain-ext-src-"), `ts-${transport}`, {
      transport,
      command: ["node", tsAgent, transport],
    });
    await installExtension(source, join(home, "extensions"));
    const { factories, problems } = catalogFactories({
      brainHome: home,
      hostHome: scratch("brain-ext-hosthome-"),
    });
    expect(problems).toEqual([]);
    t = makeBrain({ factories, home });
    const session = await t.brain.create({ harness: `ext:ts-${transport}/echo` });
    const turn = await session.prompt("huge");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    expect(textOf(await events(session), turn.turn)).toBe("h".repeat(5 << 20));
    // The host is still the one serving the session.
    expect((await (await session.prompt("next")).settled).status).toBe("completed");
  },
);
