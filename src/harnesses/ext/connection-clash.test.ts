// A TCP or HTTP host is found through its connection file, named as nui names it: `ext:a-b/c` and `ext:a/b-c` are
// both `ext-a-b-c.json`. Two such harnesses would each dial whichever host wrote the file first: one extension's
// sessions (their prompts, their questions) would run on the other's agent.
import { join } from "node:path";
import { expect, it } from "vitest";
import { catalogFactories, useScratch, writeExtension } from "../../testing/nui.js";
import { installExtension } from "./install.js";

const { scratch } = useScratch();

it("leaves out shared-host harnesses whose connection files would have one name, saying why; stdio ones stay", async () => {
  const src = scratch("brain-ext-src-");
  const home = scratch("brain-ext-home-");
  const tcp = { transport: "tcp", command: ["python3", "host.py"] };
  for (const extension of [
    writeExtension(src, "a-b", tcp, ["c"]),
    writeExtension(src, "a", { transport: "http", command: ["python3", "host.py"] }, ["b-c", "other"]),
    writeExtension(src, "x-y", tcp, ["z"]),
    writeExtension(src, "x", { transport: "stdio", command: ["python3", "host.py"] }, ["y-z"]),
  ])
    await installExtension(extension, join(home, "extensions"));
  const { factories, problems } = catalogFactories({ brainHome: home });
  const names = factories.map((f) => f.name).filter((name) => name.startsWith("ext:"));
  expect(names.sort()).toEqual(["ext:a/other", "ext:x-y/z", "ext:x/y-z"]);
  expect(problems).toEqual([
    "ext:a/b-c and ext:a-b/c would both find their host through the connection file ext-a-b-c.json (nui names it so), and could each reach the other's host: neither is offered; rename one extension, or one harness id",
  ]);
});
