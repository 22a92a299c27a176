// A TypeScript nui agent's stdout carries protocol lines only: what the agent's own code writes there, through
// process.stdout.write or any console method, goes to stderr, so output without its newline cannot run into the next
// protocol line (which Brain drops as not JSON: an event lost). A real stdio host on the built SDK.
import { afterEach, expect, it } from "vitest";
import { type NuiChild, startNuiChild } from "./nui-child.js";

const AGENT = `
class Noisy extends NuiAgent {
  name = "noisy";
  async *run() {
    yield "first ";
    process.stdout.write("progress 50%");
    yield "second ";
    console.log("logged"); console.info("informed"); console.dir({ dir: 1 }); console.table([{ table: 3 }]);
    await new Promise((resolve) => process.stdout.write("written with a callback", resolve));
    yield "third";
  }
}
new Noisy().serveStdio();
`;

let host: NuiChild | undefined;
afterEach(() => host?.dispose());

it("sends the agent's process.stdout.write and console output to stderr, and every event arrives", async () => {
  host = startNuiChild(AGENT);
  const events = await host.run(1, "go");
  expect(host.lines.filter((line) => "unparsed" in line)).toEqual([]);
  expect(events.filter((e) => e.type === "text").map((e) => e.content)).toEqual([
    "first ",
    "second ",
    "third",
  ]);
  expect(await host.shutdown()).toBe(0);
  for (const printed of [
    "progress 50%",
    "logged",
    "informed",
    "dir: 1",
    "table",
    "written with a callback",
  ]) {
    // stderr is a pipe of its own: the parent may read it after the exit.
    await expect.poll(() => host!.stderr()).toContain(printed);
  }
});
