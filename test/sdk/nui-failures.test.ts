// What a run of a TypeScript nui agent fails with is its turn's error, all a person reading the failed turn has: the
// Error's message alone ("Cannot read properties of undefined") named neither what went wrong nor where. And
// whatever run() or a hook throws, however unreadable, the run ends with its error, its done and its reply: reading
// the failure must not throw in turn (the host died of that rejection, the run unanswered). Real stdio hosts.
import { afterEach, expect, it } from "vitest";
import { type NuiChild, startNuiChild } from "./nui-child.js";

const AGENT = `
function lookup(table) {
  return table.missing.name;
}
class Unreadable extends Error {
  get message() { throw new Error("no message"); }
}
class Buggy extends NuiAgent {
  name = "buggy";
  async *run(message) {
    yield "partial";
    if (message === "type-error") lookup({});
    if (message === "unreadable-message") throw new Unreadable();
    if (message === "uninspectable") throw { toString() { throw new Error("no string"); }, [Symbol.for("nodejs.util.inspect.custom")]() { throw new Error("no inspection"); } };
    if (message === "string") throw "plain words";
    if (message === "no-reason") await Promise.reject();
    yield "fine";
  }
  getSessionId(runId) {
    if (runId === "r6") throw Object.create(null);
    return undefined;
  }
}
new Buggy().serveStdio();
`;

let host: NuiChild | undefined;
afterEach(() => host?.dispose());

it("names an Error with its type and the agent's frames nearest the throw, the SDK's left out", async () => {
  host = startNuiChild(AGENT);
  const events = await host.run(1, "type-error");
  expect(events.map((e) => e.type)).toEqual(["text", "error", "done"]);
  const error: string = events[1]?.error;
  expect(error).toMatch(
    /^TypeError: Cannot read properties of undefined \(reading 'name'\)\n {4}at lookup \(file:.*agent\.mjs:4:\d+\)\n/,
  );
  expect(error).toMatch(/\n {4}at Buggy\.run \(file:.*agent\.mjs:\d+:\d+\)/);
  expect(error).not.toMatch(/sdk\/ts\/nui|src\/protocol|node:internal/);
  expect(await host.shutdown()).toBe(0);
});

it("ends every run, whatever it or a hook threw and however unreadable, and the host serves on", async () => {
  host = startNuiChild(AGENT);
  const errorOf = async (id: number, message: string) => {
    const events = await host!.run(id, message);
    expect(events.map((e) => e.type)).toEqual(["text", "error", "done"]);
    return events[1]?.error;
  };
  expect(await errorOf(1, "unreadable-message")).toBe("Error: <its message could not be read>");
  expect(await errorOf(2, "uninspectable")).toBe("run() failed with a thrown Object that could not be read");
  expect(await errorOf(3, "string")).toBe("plain words");
  expect(await errorOf(4, "no-reason")).toBe("run() failed with undefined");
  expect((await host.run(6, "go")).map((e) => e.type)).toEqual(["text", "text", "done"]);
  // stderr is a pipe of its own: what it says may come after the reply on stdout.
  await expect
    .poll(() => host!.stderr())
    .toContain("[buggy] getSessionId failed: getSessionId failed with [Object: null prototype] {}");
  expect(host.lines.filter((line) => "unparsed" in line)).toEqual([]);
  expect(await host.shutdown()).toBe(0);
});
