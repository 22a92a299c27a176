// The tools dir a session's container mounts holds the tool endpoint's secret. Handed to the container's non-root
// user (runAs), it must stay out of reach of a process of this host that has that uid: another local user.
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { ContainerBridge, privateDir } from "./container-bridge.js";

const AGENT = { uid: 4242, gid: 4242 };
const root = process.getuid?.() === 0;

describe.skipIf(!root)("ContainerBridge's tools dir", () => {
  it("handed to the container's user, cannot be reached by a host process with that uid; removed whole", async () => {
    const dir = privateDir();
    const bridge = new ContainerBridge(() => Promise.reject(new Error("no container")), dir, "test");
    bridge.runAs(AGENT);
    expect(statSync(dir).uid).toBe(AGENT.uid);
    expect(bridge.context.user).toEqual(AGENT);
    const probe = spawnSync(
      process.execPath,
      ["-e", `require("node:fs").readdirSync(${JSON.stringify(dir)})`],
      {
        ...AGENT,
        encoding: "utf8",
      },
    );
    expect(probe.status, probe.stderr).not.toBe(0);
    expect(probe.stderr).toMatch(/EACCES/);
    await bridge.close();
    expect(existsSync(dirname(dir))).toBe(false);
  });
});
