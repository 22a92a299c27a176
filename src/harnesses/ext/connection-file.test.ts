// Connection files sit in a directory every process of the user can write (~/.nui/connections): what is found at a
// file's name is looked at without following a link or waiting on a FIFO, and only a little of it is read.
import { execFileSync } from "node:child_process";
import { rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { findConnection } from "./connection-file.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function scratch(): string {
  const dir = tempDir("brain-conn-");
  dirs.push(dir);
  return dir;
}

describe("findConnection", () => {
  it("reports a FIFO at a connection file's name as unusable at once, instead of waiting for a writer", async () => {
    const dir = scratch();
    execFileSync("mkfifo", [join(dir, "ext-a-b.json")]);
    expect(await findConnection([dir], "ext-a-b")).toEqual({
      state: "invalid",
      path: join(dir, "ext-a-b.json"),
      reason: expect.stringContaining("is not a regular file"),
    });
  });

  it("does not read through a link (to a device that never ends, say), and reads no more than a file's first 64 KiB", async () => {
    const dir = scratch();
    symlinkSync("/dev/zero", join(dir, "ext-a-b.json"));
    expect(await findConnection([dir], "ext-a-b")).toMatchObject({
      state: "invalid",
      reason: expect.stringContaining("is a symbolic link"),
    });
    writeFileSync(join(dir, "ext-c-d.json"), `{"port": 5, "pad": "${"x".repeat(1 << 20)}"}`);
    expect(await findConnection([dir], "ext-c-d")).toMatchObject({ state: "invalid", reason: /not JSON/ });
  });

  it("finds a live file, and one in no directory yet is missing", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "ext-a-b.json"), JSON.stringify({ port: 5, pid: process.pid, token: "t" }));
    expect(await findConnection([join(dir, "none/yet"), dir], "ext-a-b")).toEqual({
      state: "ready",
      path: join(dir, "ext-a-b.json"),
      info: { host: "127.0.0.1", port: 5, pid: process.pid, token: "t" },
    });
    expect(await findConnection([join(dir, "none/yet")], "ext-a-b")).toEqual({
      state: "missing",
      path: join(dir, "none/yet/ext-a-b.json"),
    });
  });
});
