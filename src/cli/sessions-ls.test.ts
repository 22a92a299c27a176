// `brain sessions ls` and `brain run --session` on a $BRAIN_HOME where one session's record cannot be read: the
// others are listed and run, and the damaged one is named with its file and the fix.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsSessionStore } from "../store/fs/index.js";
import { makeBrain } from "../testing/brain.js";
import { useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("cli-ls");
const brain = cli.run;

describe("a session record that cannot be read", () => {
  it("is named by `sessions ls`, and stops neither the listing nor a run of another session", async () => {
    // Made as Brain makes one (its log starts with session.opened): a record alone is a session never made.
    const made = makeBrain({ home: cli.home });
    const good = (await made.brain.create({ harness: "echo" })).id;
    await made.brain.close();
    const store = new FsSessionStore(cli.home);
    const damaged = (await store.create({ harness: "echo", config: {} })).id;
    const file = join(cli.home, "sessions", damaged, "session.json");
    writeFileSync(file, "{not json");

    for (const args of [
      ["sessions", "ls"],
      ["sessions", "ls", "--json"],
    ]) {
      const { code, out, err } = brain(args);
      expect(code).toBe(0);
      expect(out).toContain(good);
      expect(out).not.toContain(damaged);
      expect(err).toContain(`session ${damaged} cannot be listed: ${file}: not valid JSON`);
      expect(err).toContain("repair");
    }

    const run = brain(["run", "--session", good, "again"]);
    expect(run.err).toContain(`session ${good}`);
    expect(run.code).toBe(0);
  });
});

// brain.close() at the end of a run logged session.closed but left the record "open": `sessions ls` (and the
// daemon's view, and `brain attach`) said open for a session no process held.
describe("a session a finished `brain run` closed", () => {
  it("is listed closed, and a later run on it reopens it and closes it again", () => {
    const first = brain(["run", "hello"]);
    expect(first.code, first.err).toBe(0);
    const id = /session (\S+)\n/.exec(first.err)![1]!;
    const listed = () =>
      brain(["sessions", "ls"])
        .out.split("\n")
        .find((line) => line.startsWith(id));
    expect(listed()).toMatch(/^\S+\s+echo\s+closed /);
    const record = () =>
      brain(["sessions", "ls", "--json"])
        .out.split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { id: string; status: string })
        .find((r) => r.id === id);
    expect(record()?.status).toBe("closed");

    const again = brain(["run", "--session", id, "again"]);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toBe("echo #2: again\n");
    expect(listed()).toMatch(/^\S+\s+echo\s+closed /);
  });

  it("stays closed after `brain checkpoint` opened it, and what `brain fork` and `brain handoff` made is closed", () => {
    const run = brain(["run", "hello"]);
    expect(run.code, run.err).toBe(0);
    const id = /session (\S+)\n/.exec(run.err)![1]!;
    expect(brain(["checkpoint", id]).code).toBe(0);
    const fork = brain(["fork", id]);
    expect(fork.code, fork.err).toBe(0);
    const handoff = brain(["handoff", id, "--to", "echo"]);
    expect(handoff.code, handoff.err).toBe(0);
    const made = [id, fork.out.trim(), handoff.out.trim()];
    const rows = brain(["sessions", "ls"]).out.split("\n");
    expect(made.map((made) => rows.find((row) => row.startsWith(made)))).toEqual(
      made.map((made) => expect.stringMatching(new RegExp(`^${made}\\s+echo\\s+closed `))),
    );
  });
});
