// A server restarted after a crash may offer tools its first start did not: their session names are checked
// against the other servers' as at the first start, so no name is given to two servers.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import type { ToolServiceEvent } from "../tool-service.js";
import { McpSessionServers } from "./index.js";
import { fixtureStdio } from "./testing/servers.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it("leaves out a restarted server's new tool whose session name another server has", async () => {
  const dir = tempDir();
  const prefixFile = join(dir, "prefix");
  writeFileSync(prefixFile, "");
  // `git` + `_env` and `git_` + `env` are both `git___env`: `git` offers `_env` only once restarted with the prefix.
  const servers = new McpSessionServers(
    {
      git_: fixtureStdio({ tools: ["env", "pid"] }),
      git: fixtureStdio({ tools: ["_env", "crash"], env: { FIXTURE_TOOL_PREFIX_FILE: prefixFile } }),
    },
    { baseDir: dir, env: {}, restartDelays: [10, 10] },
  );
  cleanups.push(async () => {
    await servers.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const events: ToolServiceEvent[] = [];
  const [first, git] = await servers.start((event) => events.push(event));
  const names = async (service: typeof git) => (await service!.list()).map((tool) => tool.name);
  expect(await names(git)).toEqual(["git__crash"]);

  writeFileSync(prefixFile, "_");
  await git!.call("git__crash", {}, new AbortController().signal);
  const restarted = () => events.find((e) => e.service === "git" && e.state === "restarted");
  await expect.poll(restarted).toBeDefined();
  expect(await names(git)).not.toContain("git___env");
  expect(await names(first)).toContain("git___env");
  expect(restarted()).toMatchObject({
    tools: [],
    message: 'skipped tools whose names the session has given first: git___env (server "git_"\'s)',
  });
});
