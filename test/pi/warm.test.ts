// runners/pi's warming: a runner left unopened (a warm spare) loads its providers' code and rehearses whole turns
// against a loopback server of its own, leaving nothing behind; a runner opened at once does not rehearse, and one
// opened mid-rehearsal rehearses no further turn.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REHEARSALS, Warmer } from "../../runners/pi/warm.js";

// This process's rehearsal directories only: a Warmer also sweeps the directories of dead runners that other
// tests' spares left (the last test checks that), so the whole of tmpdir can shrink while a test runs.
const leftovers = () =>
  readdirSync(tmpdir()).filter((name) => name.startsWith(`brain-pi-warm-${process.pid}-`));

describe("runners/pi warming", () => {
  it("rehearses its turns once idle, in a directory it removes", async () => {
    const before = leftovers();
    const warmer = new Warmer(0);
    expect(await warmer.warmed).toBe(true);
    expect(await warmer.rehearsed).toBe(REHEARSALS);
    expect(leftovers()).toEqual(before);
  });

  it("rehearses no further turn once a session opens on it", async () => {
    const before = leftovers();
    const warmer = new Warmer(0);
    // The rehearsal has begun (its timer fired) and is still loading and starting its server.
    await new Promise((resolve) => setTimeout(resolve, 0));
    warmer.opened("openai-completions");
    expect(await warmer.warmed).toBe(false);
    expect(await warmer.rehearsed).toBe(0);
    expect(leftovers()).toEqual(before);
  });

  it("removes what a runner killed mid-rehearsal left behind", async () => {
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
    const left = join(tmpdir(), `brain-pi-warm-${dead}-killed`);
    mkdirSync(join(left, "native"), { recursive: true });
    expect(await new Warmer(0).warmed).toBe(true);
    expect(existsSync(left)).toBe(false);
  });

  it("does not rehearse in a runner opened before it counted as a spare", async () => {
    const warmer = new Warmer(60_000);
    warmer.opened("openai-completions");
    expect(await warmer.warmed).toBe(false);
    expect(await warmer.rehearsed).toBe(0);
  });
});
