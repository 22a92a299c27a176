// The TypeScript nui SDK's host (sdk/ts/leaks.ts) when an agent's code leaves a rejected promise unhandled: Node
// ends the process for it by default, with every run the host serves. Within a run it fails that run alone;
// outside every run, or after its run failed or ended, it is written to stderr; the host serves on.
import { afterEach, describe, expect, it } from "vitest";
import { type NuiChild, startNuiChild } from "./nui-child.js";

let host: NuiChild | undefined;
afterEach(() => {
  host?.dispose();
  host = undefined;
});

const agent = `
let open;
const opened = new Promise((resolve) => { open = resolve; });
// Outside every run: rejected as the module loads, handled by nobody.
setTimeout(() => Promise.reject(new Error("stray leak")), 0);
class Leaky extends NuiAgent {
  name = "leaky";
  async *run(message) {
    yield "starting";
    if (message === "leak") {
      setTimeout(() => {
        Promise.reject(new Error("leaked in a timer"));
        Promise.reject(new Error("leaked second"));
        open();
      }, 0);
      await new Promise(() => {}); // never ends by itself
    }
    if (message === "wait") await opened;
    yield "fine";
  }
}
await new Leaky().serveStdio();
`;

describe("nui SDK: a promise rejection an agent leaves unhandled", () => {
  it("fails only the run it was made in, is logged when made outside any, and the host serves its other runs", async () => {
    host = startNuiChild(agent);
    // The other session's run waits until the leak has happened.
    const [waited, leaked] = await Promise.all([host.run(1, "wait"), host.run(2, "leak")]);
    expect(waited.map((e) => [e.type, e.content])).toEqual([
      ["text", "starting"],
      ["text", "fine"],
      ["done", undefined],
    ]);
    expect(leaked.map((e) => e.type)).toEqual(["text", "error", "done"]);
    expect(leaked[1]?.error).toMatch(/^an unhandled promise rejection in run r2: Error: leaked in a timer/);
    expect(host.stderr()).toMatch(
      /\[leaky\] an unhandled promise rejection outside any run .*Error: stray leak/,
    );
    // The second, made before the run could end, fails nothing more and is not lost (stderr is its own pipe).
    await expect
      .poll(() => host!.stderr())
      .toMatch(
        /\[leaky\] an unhandled promise rejection in run r2, after an earlier one failed it .*Error: leaked second/,
      );
    expect((await host.run(3, "again")).map((e) => e.type)).toEqual(["text", "text", "done"]);
    expect(await host.shutdown()).toBe(0);
  });
});
