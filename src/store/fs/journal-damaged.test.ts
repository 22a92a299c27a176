// A dead process's journal (journal.ts) that cannot be replayed whole: damaged inside, a record its log cannot
// take, or a file that cannot be read. It must fail only the opens of the logs whose acknowledged events it cannot
// prove are in their files, and say what to do; every record it can apply still reaches its log; a torn tail (a
// round a crash cut short, never acknowledged) is dropped as before.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { FRAME_BYTES, JOURNAL_SUFFIX, type RecordHead } from "./journal.js";
import { parseJournal } from "./journal-replay.js";
import { FsSessionStore } from "./session-store.js";
import { type JournalingChild, journalingChild, logIn, TWO_LOGS } from "./testing/journaling-child.js";

let home: string;
let child: JournalingChild | undefined;
const warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(w.message);

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-damaged-"));
  warnings.length = 0;
  process.on("warning", onWarning);
});

afterEach(async () => {
  process.off("warning", onWarning);
  await child?.kill();
  child = undefined;
  await fs.rm(home, { recursive: true, force: true });
});

const logOf = (id: string) => logIn(home, id);
const journalDir = () => path.join(home, "journal");
const entries = async () => (await fs.readdir(journalDir())).filter((n) => !n.endsWith(".lock"));

/** Where each record of the journal starts, with its head: records are written back to back. */
function frames(buf: Buffer): { at: number; head: RecordHead; end: number }[] {
  let at = 0;
  return parseJournal(buf).map(({ head, bytes }) => {
    const end = at + FRAME_BYTES + Buffer.byteLength(JSON.stringify(head)) + bytes.length;
    const frame = { at, head, end };
    at = end;
    return frame;
  });
}

/**
 * The child's journal, killed, as `damage` leaves it (given its bytes and frames), the files of the logs
 * `crashed` emptied: what a crash of the machine leaves of a log whose appends were never synced.
 */
async function deadJournal(
  damage: (bytes: Buffer, at: ReturnType<typeof frames>) => Buffer,
  crashed: string[],
): Promise<string> {
  child = await journalingChild(home, TWO_LOGS);
  await child.kill();
  const [name] = (await fs.readdir(journalDir())).filter((n) => n.endsWith(JOURNAL_SUFFIX));
  const journal = path.join(journalDir(), name!);
  const bytes = await fs.readFile(journal);
  const at = frames(bytes);
  expect(at.map((f) => `${f.head.s}${f.head.f}`)).toEqual(["a1", "a2", "a3", "b1", "b2", "b3"]);
  await fs.writeFile(journal, damage(Buffer.from(bytes), at));
  for (const id of crashed) {
    await fs.truncate(logOf(id), 0);
    await fs.rm(`${logOf(id)}.state`, { force: true });
  }
  return journal;
}

/** The texts of session `id` as a new journaling store opens it. */
async function texts(id: string): Promise<string[]> {
  const store = new FsSessionStore(home, undefined, undefined, { journal: true });
  try {
    const log = await store.openLog(id);
    try {
      return (await log.read(0)).map((e) => (e.data as { text: string }).text);
    } finally {
      await log.close();
    }
  } finally {
    await store.close();
  }
}

/** A byte of the record's payload changed: its header still names its log and seqs, its CRC fails. */
const flipPayload = (bytes: Buffer, f: { end: number }) => {
  bytes.writeUInt8(bytes.readUInt8(f.end - 3) ^ 0x20, f.end - 3);
  return bytes;
};

it("a damaged record mid-journal fails only its log's opens, with the way out; every other record is replayed", async () => {
  const journal = await deadJournal((bytes, at) => flipPayload(bytes, at[1]!), ["a", "b"]);
  expect(await texts("b")).toEqual(["b1", "b2", "b3"]);
  const error = texts("a");
  await expect(error).rejects.toThrow(journal);
  await expect(error).rejects.toThrow(logOf("a"));
  await expect(error).rejects.toThrow(/seqs 2-2 .*damaged.*holds seqs up to 1 .*move the journal aside/);
  // Still there for a's sake; another store's open of b replays it again, harmlessly.
  expect(await entries()).toEqual([path.basename(journal)]);
  expect(await texts("b")).toEqual(["b1", "b2", "b3"]);
  // The way out the error gives: a opens with what its file holds (a1; a3 followed the lost a2).
  await fs.rename(journal, `${journal}.aside`);
  expect(await texts("a")).toEqual(["a1"]);
});

it("a damaged record whose seqs its log's file holds costs nothing: every log opens whole, the journal goes", async () => {
  // Killed, not crashed: a's file holds a2 (in the page cache); b's file lost its appends.
  await deadJournal((bytes, at) => flipPayload(bytes, at[1]!), ["b"]);
  expect(await texts("b")).toEqual(["b1", "b2", "b3"]);
  expect(await texts("a")).toEqual(["a1", "a2", "a3"]);
  expect(await entries()).toEqual([]);
});

it("a record past its log's end fails only that log's opens, naming the journal and the log", async () => {
  // a1's record gone: a's file (emptied) lacks the bytes a2's record follows.
  const journal = await deadJournal(
    (bytes, at) => Buffer.concat([bytes.subarray(0, at[0]!.at), bytes.subarray(at[0]!.end)]),
    ["a", "b"],
  );
  expect(await texts("b")).toEqual(["b1", "b2", "b3"]);
  const error = texts("a");
  await expect(error).rejects.toThrow(journal);
  await expect(error).rejects.toThrow(/seqs 2-2 .* past the log's end 0.*move the journal aside/);
});

it("a record whose head cannot be read puts the journal aside, loudly, once every readable record is replayed", async () => {
  // a3's frame unreadable (its magic gone): which log it names is unknown. a's file holds it (killed, not crashed).
  const journal = await deadJournal((bytes, at) => bytes.fill(0, at[2]!.at, at[2]!.at + 4), ["b"]);
  expect(await texts("b")).toEqual(["b1", "b2", "b3"]);
  const [aside] = await entries();
  expect(aside).toMatch(new RegExp(`^${path.basename(journal)}\\.unreadable-`));
  expect(warnings.join("\n")).toContain(path.join(journalDir(), aside!));
  expect(await texts("a")).toEqual(["a1", "a2", "a3"]);
});

it("a journal that cannot be read at all is put aside, loudly, and every log opens", async () => {
  const journal = await deadJournal((bytes) => bytes, []);
  // Unreadable: read(2) fails on it (EISDIR), as a bad sector's EIO would.
  await fs.rm(journal);
  await fs.mkdir(journal);
  expect(await texts("b")).toEqual(["b1", "b2", "b3"]);
  const [aside] = await entries();
  expect(aside).toMatch(new RegExp(`^${path.basename(journal)}\\.unreadable-`));
  expect(warnings.join("\n")).toMatch(/EISDIR/);
  expect(await texts("a")).toEqual(["a1", "a2", "a3"]);
});

it("a torn tail is dropped as before: no error, no warning, the journal removed", async () => {
  // b3's round cut short by the crash: never acknowledged, so b may open without it.
  await deadJournal((bytes, at) => bytes.subarray(0, at[5]!.end - 7), ["b"]);
  expect(await texts("b")).toEqual(["b1", "b2"]);
  expect(await texts("a")).toEqual(["a1", "a2", "a3"]);
  expect(await entries()).toEqual([]);
  expect(warnings).toEqual([]);
});

it("a record differing from the bytes its log holds at its place is not written over them: that log's opens fail", async () => {
  // a made again since (removed, then created with one longer event): a2's record would land inside its line.
  const journal = await deadJournal((bytes) => bytes, ["b"]);
  const [header] = (await fs.readFile(logOf("a"), "utf8")).split("\n");
  const line = { seq: 1, ts: new Date().toISOString(), turn: "t1", d: ["a1, made again longer than before"] };
  await fs.writeFile(logOf("a"), `${header}\n${JSON.stringify(line)}\n`);
  await fs.rm(`${logOf("a")}.state`, { force: true });
  expect(await texts("b")).toEqual(["b1", "b2", "b3"]);
  const error = texts("a");
  await expect(error).rejects.toThrow(journal);
  await expect(error).rejects.toThrow(/seqs 2-2 at byte \d+ differs from the bytes the log holds there/);
  await fs.rename(journal, `${journal}.aside`);
  expect(await texts("a")).toEqual(["a1, made again longer than before"]);
});
