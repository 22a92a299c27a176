// GET /v1/sessions/{id} says what the session's native state takes on the daemon's disk (native_disk), as `brain
// sessions show` does, from the same count (Brain.nativeDisk); a list does not, which would walk every session's
// native dir.
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { collect, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

/** The sizes of the files under `dir` as the disk has them, directories not counted; 0 when it is not there. */
function bytesUnder(dir: string): number {
  if (!existsSync(dir)) return 0;
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => lstatSync(join(dir, name)))
    .filter((entry) => !entry.isDirectory())
    .reduce((sum, entry) => sum + entry.size, 0);
}

/** An echo session with one turn answered, and its native dir. */
async function answered(): Promise<{ id: string; native: string }> {
  const client = t.client();
  const { id } = await client.create({ harness: "echo" });
  await collect(client, id, settled((await client.prompt(id, "remember KIWI")).turn));
  return { id, native: join(t.home, "sessions", id, "native") };
}

describe("GET /v1/sessions/{id}: native_disk", () => {
  it("is the bytes of the native dir, and of the folder a rebuild kept beside it", async () => {
    const { id, native } = await answered();
    mkdirSync(join(native, "deep", "er"), { recursive: true });
    writeFileSync(join(native, "deep", "er", "state.bin"), Buffer.alloc(1000));
    const grown = bytesUnder(native);
    expect(grown).toBeGreaterThanOrEqual(1000);
    expect((await t.client().session(id)).native_disk).toEqual({
      native_bytes: grown,
      rebuild_aside_bytes: 0,
    });
    const { aside } = await t.client().rebuild(id);
    // The first rebuild moves the native files from before it (the 1000 bytes among them) into that folder.
    const kept = bytesUnder(join(t.home, "sessions", id, aside));
    expect(kept).toBe(grown);
    expect((await t.client().session(id)).native_disk).toEqual({
      native_bytes: bytesUnder(native),
      rebuild_aside_bytes: kept,
    });
  });

  it("is 0 bytes for a session whose native dir is not on the daemon's disk", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    rmSync(join(t.home, "sessions", id, "native"), { recursive: true, force: true });
    expect((await t.client().session(id)).native_disk).toEqual({ native_bytes: 0, rebuild_aside_bytes: 0 });
  });

  it("is not in a list, whole or a page, nor in the answer of a create", async () => {
    const { id, native } = await answered();
    writeFileSync(join(native, "listed.bin"), Buffer.alloc(10));
    const made = await t.client().create({ harness: "echo" });
    expect(made).not.toHaveProperty("native_disk");
    const whole = await raw(t.url, "GET", "/v1/sessions", { token: t.tokens.admin });
    const page = await raw(t.url, "GET", "/v1/sessions?limit=1000&order=newest", { token: t.tokens.admin });
    for (const list of [whole, page]) {
      expect(list.status).toBe(200);
      const views = list.body.sessions as Record<string, unknown>[];
      expect(views.map((view) => view.id)).toContain(id);
      expect(views.filter((view) => "native_disk" in view)).toEqual([]);
    }
  });
});
