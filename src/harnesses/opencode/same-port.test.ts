// Two opencode servers one after the other on this host, with no container in between: `opencode serve --port 0`
// binds 4096 whenever it is free, so the second server is on the first one's address. The real program, in a
// loopback-only namespace of its own (the other tests' launcher holds 4096 to keep parallel servers apart, which
// hides this), as `brain conformance` and a daemon without a sandbox run it.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { unshareWords } from "../../testing/netns/sandbox.js";
import { locateCli } from "../cli/locate.js";

vi.setConfig({ testTimeout: 300_000 });

const SERVER_JS = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "../../../dist/src/harnesses/opencode/server.js",
);

/** Starts a server, stops it, and starts the next at once, three times; prints each start's outcome. */
const RESTARTS = `
const { OpencodeServer } = await import(process.argv[2]);
const [opencode, home] = process.argv.slice(3);
const env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: home + "/config", XDG_DATA_HOME: home + "/data",
  XDG_STATE_HOME: home + "/state", XDG_CACHE_HOME: home + "/cache", OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "1", OPENCODE_DISABLE_SHARE: "1" };
for (let i = 0; i < 3; i++) {
  try {
    const server = await OpencodeServer.start({ command: opencode, env, cwd: home, extraArgs: [],
      startTimeoutMs: 120000, onEvent() {}, onGone() {} });
    const sessions = await server.call("GET", "/session");
    console.log("started " + new URL(server.url).port + " " + Array.isArray(sessions));
    await server.stop();
  } catch (err) {
    console.log("failed: " + err.message);
  }
}
`;

const opencode = locateCli("opencode");

describe.runIf(opencode)("opencode servers one after another on one address", () => {
  it("each gets its event stream and its calls answered, not the connections the one before left", async () => {
    const home = tempDir("brain-opencode-port-");
    const script = join(home, "restarts.mjs");
    writeFileSync(script, RESTARTS);
    const [unshare, ...flags] = unshareWords();
    const inside = `ip link set lo up && exec "$0" "$@"`;
    const args = [...flags, "sh", "-c", inside, process.execPath, script];
    const { stdout } = await promisify(execFile)(
      unshare!,
      [...args, pathToFileURL(SERVER_JS).href, opencode!, home],
      { timeout: 280_000 },
    );
    expect(stdout.trim().split("\n")).toEqual([
      "started 4096 true",
      "started 4096 true",
      "started 4096 true",
    ]);
  });
});
