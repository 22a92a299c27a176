// A state save writes a temp file and renames it over the state: a save that fails must not leave the temp
// behind, and one left by a writer that died mid-save is removed by the next open (it holds the lock, so no live
// writer of the log can own it), not kept until the session is deleted.
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { tempName } from "../../core/checkpoints/temps.js";
import { killedPid } from "../../core/checkpoints/testing.js";
import { JsonlEventLog } from "./jsonl-log.js";
import { statePath } from "./log-state.js";
import { useLogDir } from "./testing/log-dir.js";

const temps = async (dir: string) => (await fs.readdir(dir)).filter((n) => n.endsWith(".tmp"));

describe("the saved state's temp files", () => {
  const paths = useLogDir("brain-state-temps-");

  it("are removed when a save fails", async () => {
    // A directory where the state goes: the temp is written, its rename over the state fails.
    await fs.mkdir(statePath(paths.file));
    await fs.writeFile(`${statePath(paths.file)}/x`, "");
    const log = await JsonlEventLog.open(paths.file, "s1");
    await log.append([{ type: "harness.warning", data: { message: "a" } }]);
    await log.close(); // its state save fails
    expect(await temps(paths.dir)).toEqual([]);
  });

  it("left by a writer that died are removed by the next open", async () => {
    const first = await JsonlEventLog.open(paths.file, "s1");
    await first.append([{ type: "harness.warning", data: { message: "a" } }]);
    await first.close();
    await fs.writeFile(`${statePath(paths.file)}.4242.tmp`, "{");
    await fs.writeFile(`${paths.file}.compact.tmp`, "{");
    const log = await JsonlEventLog.open(paths.file, "s1");
    expect(await temps(paths.dir)).toEqual([]);
    expect((await log.append([{ type: "harness.warning", data: { message: "b" } }]))[0]?.seq).toBe(2);
    await log.close();
  });

  it("left beside the log by a process killed mid-write (a lock taken, a record) go at the next open; a live one's stay", async () => {
    const dead = `tmp-${await killedPid()}-00000000-${randomUUID()}`;
    const live = `session.json.${tempName("tmp")}`;
    for (const name of [`events.jsonl.lock.${dead}`, `session.json.${dead}`, live])
      await fs.writeFile(`${paths.dir}/${name}`, "{");
    const log = await JsonlEventLog.open(paths.file, "s1");
    await log.close();
    expect((await fs.readdir(paths.dir)).filter((n) => n.includes(".tmp-"))).toEqual([live]);
  });
});
