// `brain sessions show ID [--tail N] [--after SEQ]` through bin/brain.js on a session with a long log: the record,
// the last seq, the pending requests and checkpoints, what its native state takes on disk, and only a window of the
// events.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import { appendWarnings, echoSessionIn, sessionIdFrom, useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("cli-show");
const brain = cli.run;
const WARNINGS = 1_000;

let id: string;
beforeAll(async () => {
  id = await echoSessionIn(cli.home, async (session) => {
    await session.checkpoint();
    await appendWarnings(session, WARNINGS, (n) => `warning ${n}`);
    await session.log.append([{ type: "question.requested", data: { id: "q1", question: "which way?" } }]);
  });
});

function show(...flags: string[]) {
  return showOf(id, ...flags);
}

function showOf(session: string, ...flags: string[]) {
  const shown = brain(["sessions", "show", session, ...flags]);
  expect(shown.code, shown.err).toBe(0);
  return JSON.parse(shown.out) as {
    id: string;
    last_seq: number;
    pending: { id: string; kind: string }[];
    checkpoints: string[];
    native_disk: { native_bytes: number; rebuild_aside_bytes: number; unreadable?: number };
    events: SessionEvent[];
  };
}

const seqs = (events: SessionEvent[]) => events.map((e) => e.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("brain sessions show", () => {
  it("prints the record, last seq, pending requests, checkpoints and only the last 20 events", () => {
    const shown = show();
    expect(shown).toMatchObject({ id, harness: "echo", status: expect.any(String) });
    const last = shown.last_seq;
    expect(last).toBeGreaterThan(WARNINGS);
    expect(shown.pending).toMatchObject([{ id: "q1" }]);
    expect(shown.checkpoints).toEqual(["000001"]);
    expect(seqs(shown.events)).toEqual(range(last - 19, last));
    expect(shown.events.some((e) => e.type === "question.requested")).toBe(true);
  });

  it("--tail N prints the last N, --after SEQ the first N after SEQ", () => {
    const last = show().last_seq;
    expect(seqs(show("--tail", "3").events)).toEqual(range(last - 2, last));
    expect(show("--tail", "0").events).toEqual([]);
    expect(show("--tail", String(last + 50)).events).toHaveLength(last);
    expect(seqs(show("--after", "100").events)).toEqual(range(101, 120));
    const five = show("--after", "500", "--tail", "5").events;
    expect(seqs(five)).toEqual(range(501, 505));
    expect(five[0]).toMatchObject({
      type: "harness.warning",
      data: { message: expect.stringMatching(/^warning /) },
    });
    expect(show("--after", String(last)).events).toEqual([]);
  });

  it("refuses a bad --tail or --after, naming the flag and what it takes", () => {
    for (const [flag, value] of [
      ["--tail", "ten"],
      ["--tail", "1.5"],
      ["--tail=-1", undefined],
      ["--after", "x"],
      ["--after", ""],
    ] as const) {
      const refused = brain(["sessions", "show", id, flag, ...(value === undefined ? [] : [value])]);
      expect(refused.code).toBe(2);
      const name = flag.split("=")[0];
      const takes = name === "--tail" ? "how many events to print" : "the seq to print events after";
      expect(refused.err).toContain(`${name} takes ${takes} (a whole number, 0 or more), not "`);
    }
    expect(brain(["sessions", "events", id, "--tail", "3"]).err).toContain("--tail is for `sessions show`");
  });

  it("says what the native state takes on disk: the native dir, and the folder a rebuild kept beside it", async () => {
    const other = await echoSessionIn(cli.home, async () => {});
    const native = join(cli.home, "sessions", other, "native");
    const before = showOf(other).native_disk;
    expect(before.rebuild_aside_bytes).toBe(0);
    mkdirSync(join(native, "deep", "er"), { recursive: true });
    writeFileSync(join(native, "deep", "er", "state.bin"), Buffer.alloc(1000));
    const grown = before.native_bytes + 1000;
    expect(showOf(other).native_disk).toEqual({ native_bytes: grown, rebuild_aside_bytes: 0 });
    const rebuilt = brain(["sessions", "rebuild", other]);
    expect(rebuilt.code, rebuilt.err).toBe(0);
    // The first rebuild keeps the native files from before it beside the new ones (echo's, none): counted there now.
    expect(showOf(other).native_disk).toEqual({
      native_bytes: before.native_bytes,
      rebuild_aside_bytes: grown,
    });
  });

  it("widens its window back over the gaps a compacted log has", () => {
    const other = sessionIdFrom(brain(["run", "one two three four five six seven eight nine ten"]).err);
    expect(brain(["sessions", "compact", other]).code).toBe(0);
    const all = brain(["sessions", "events", other])
      .out.trim()
      .split("\n")
      .map((line) => JSON.parse(line) as SessionEvent);
    const shown = JSON.parse(brain(["sessions", "show", other, "--tail", "4"]).out);
    expect(seqs(shown.events)).toEqual(seqs(all.slice(-4)));
    expect(seqs(all).at(-1)).toBe(shown.last_seq);
  });

  it("keeps the host's secret-named variables out of an error it prints, which may end up in a CI log", () => {
    const key = "sk-cli-error-secret-0123";
    const env = { W18F_API_KEY: key };
    const missing = brain(["sessions", "show", key], undefined, env);
    expect(missing.code).toBe(1);
    expect(missing.err).toBe('brain: not_found: no session "[redacted:W18F_API_KEY]"\n');
    const usage = brain(["sessions", "show", id, "--tail", key], undefined, env);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain("[redacted:W18F_API_KEY]");
    expect(usage.err).not.toContain(key);
  });

  it("keeps out a provider key whatever the variable its config's api_key_env names is called", () => {
    const key = "llm-key-w19-cli-0123456789";
    const dir = join(cli.work, "named-key");
    mkdirSync(dir);
    const config = { providers: { llm: { api: "openai", api_key_env: "MY_LLM" } } };
    writeFileSync(join(dir, "brain.config.json"), JSON.stringify(config));
    const missing = brain(["sessions", "show", key], dir, { MY_LLM: key });
    expect(missing.code).toBe(1);
    expect(missing.err).toBe('brain: not_found: no session "[redacted:MY_LLM]"\n');
    // --config names the file from anywhere.
    const named = brain(["sessions", "show", "--config", join(dir, "brain.config.json"), key], undefined, {
      MY_LLM: key,
    });
    expect(named.err).toBe('brain: not_found: no session "[redacted:MY_LLM]"\n');
  });
});
