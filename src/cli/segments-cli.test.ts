// `brain sessions compact ID --archive-segments | --drop-segments`: a real process on a throwaway $BRAIN_HOME.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeLogText, header } from "../store/fs/log-format.js";
import { sealedPath } from "../store/fs/segments.js";
import { sessionIdFrom, useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("cli");
const brain = (args: string[]) => cli.run(args);
const home = cli.home;

describe("brain sessions compact with segment options", () => {
  it("archives or drops a closed session's sealed segments with compact's options; the rest opens and runs on", () => {
    const id = sessionIdFrom(brain(["run", "one two three"]).err);
    expect(brain(["run", "--session", id, "four five"]).code).toBe(0);
    // The log as two segments, as it rolls once it is large.
    const file = join(home, "sessions", id, "events.jsonl");
    const { events } = decodeLogText(readFileSync(file, "utf8"), id);
    const cut = events.findIndex((e) => e.type === "turn.settled") + 1;
    const line = (e: (typeof events)[number]) =>
      `${JSON.stringify({ seq: e.seq, ts: e.ts, turn: e.turn, type: e.type, data: e.data })}\n`;
    writeFileSync(sealedPath(file, 1), header(id) + events.slice(0, cut).map(line).join(""));
    writeFileSync(
      file,
      header(id, { seq: cut, requests: [], openTurns: [] }) + events.slice(cut).map(line).join(""),
    );
    rmSync(`${file}.state`, { force: true });
    expect(brain(["sessions", "compact", id, "--max-log-mb", "1"]).code).toBe(2);
    const done = brain(["sessions", "compact", id, "--drop-segments", "--json"]);
    expect(done.code).toBe(0);
    expect(JSON.parse(done.out.split("\n")[0]!)).toMatchObject({
      segments: { dropped: 1, firstSeq: cut + 1 },
    });
    const left = brain(["sessions", "events", id])
      .out.trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(left[0].seq).toBe(cut + 1);
    expect(brain(["run", "--session", id, "six"]).out).toBe("echo #3: six\n");
    // Checkpoints and forks of what remains work as before.
    expect(brain(["checkpoint", id]).code).toBe(0);
    const fork = brain(["fork", id]).out.trim();
    expect(brain(["run", "--session", fork, "forked"]).out).toBe("echo #4: forked\n");
    const refused = brain(["sessions", "compact", id, "--archive-segments"]);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/forked or handed off to .*its segments stay/);
  }, 90_000);
});
