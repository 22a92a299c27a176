// The folders a rebuild moves native files through, on a real directory: what a failed seeding and a crash
// mid-rebuild leave, and that the next rebuild starts from a whole state. Brain's rebuild is in ./handoff.test.ts.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ASIDE_PREFIX, REPLACING, reseed } from "./rebuild-aside.js";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A session's directory whose native dir holds `files` and the agent's `work` tree. */
function sessionDir(files: Record<string, string>) {
  dir = mkdtempSync(join(tmpdir(), "brain-rebuild-aside-"));
  const native = join(dir, "native");
  mkdirSync(join(native, "work"), { recursive: true });
  writeFileSync(join(native, "work", "code.ts"), "the agent's work");
  for (const [name, text] of Object.entries(files)) writeFileSync(join(native, name), text);
  return native;
}
const write = (native: string, name: string, text: string) => async () => {
  writeFileSync(join(native, name), text);
  return "seeded";
};
const kept = () => readdirSync(dir).filter((name) => name.startsWith(ASIDE_PREFIX));

describe("reseed", () => {
  it("a later seeding that fails puts the rebuilt state back and keeps the original folder as it was", async () => {
    const native = sessionDir({ "state.json": "original" });
    const { aside } = await reseed(native, write(native, "state.json", "rebuilt"));
    await expect(
      reseed(native, async () => {
        writeFileSync(join(native, "half.json"), "half");
        throw new Error("ENOSPC: no space left on device");
      }),
    ).rejects.toThrow(/ENOSPC/);
    expect(readdirSync(native).sort()).toEqual(["state.json", "work"]);
    expect(readFileSync(join(native, "state.json"), "utf8")).toBe("rebuilt");
    expect(readFileSync(join(aside, "state.json"), "utf8")).toBe("original");
    expect(readdirSync(dir).sort()).toEqual([kept()[0], "native"].sort());
  });

  it("after a crash while the first rebuild moved the files, the next one keeps the whole original", async () => {
    // The crash left part of the original in the holding folder, the rest in the native dir; nothing kept yet.
    const native = sessionDir({ "b.json": "original b" });
    mkdirSync(join(dir, REPLACING));
    writeFileSync(join(dir, REPLACING, "a.json"), "original a");
    const { aside } = await reseed(native, write(native, "state.json", "rebuilt"));
    expect(readdirSync(aside).sort()).toEqual(["a.json", "b.json"]);
    expect(readdirSync(native).sort()).toEqual(["state.json", "work"]);
    expect(readFileSync(join(native, "work", "code.ts"), "utf8")).toBe("the agent's work");
    expect(readdirSync(dir)).not.toContain(REPLACING);
  });

  it("after a crash while a later rebuild seeded, the next one removes that and keeps only the original", async () => {
    const native = sessionDir({ "state.json": "original" });
    const { aside } = await reseed(native, write(native, "state.json", "rebuilt"));
    // The crash: the rebuilt state held aside, a half-written one in the native dir.
    mkdirSync(join(dir, REPLACING));
    writeFileSync(join(dir, REPLACING, "state.json"), "rebuilt");
    writeFileSync(join(native, "state.json"), "half");
    expect((await reseed(native, write(native, "state.json", "rebuilt again"))).aside).toBe(aside);
    expect(readFileSync(join(native, "state.json"), "utf8")).toBe("rebuilt again");
    expect(readdirSync(dir).sort()).toEqual([kept()[0], "native"].sort());
    expect(readdirSync(aside)).toEqual(["state.json"]);
    expect(readFileSync(join(aside, "state.json"), "utf8")).toBe("original");
  });

  it("keeps the first of the folders an older Brain kept, one per rebuild, and removes the others", async () => {
    const native = sessionDir({ "state.json": "rebuilt" });
    for (const [time, text] of [
      ["2026-01-01T00-00-00-000Z", "original"],
      ["2026-02-01T00-00-00-000Z", "x"],
    ]) {
      mkdirSync(join(dir, `${ASIDE_PREFIX}${time}`));
      writeFileSync(join(dir, `${ASIDE_PREFIX}${time}`, "state.json"), text!);
    }
    const { aside } = await reseed(native, write(native, "state.json", "rebuilt again"));
    expect(kept()).toEqual([`${ASIDE_PREFIX}2026-01-01T00-00-00-000Z`]);
    expect(readFileSync(join(aside, "state.json"), "utf8")).toBe("original");
  });
});
