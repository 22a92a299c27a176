// Reading a journal's bytes (journal.ts) for its replay: every whole record, and what lies between them that is not
// one. A journal is written in rounds at its end, so what is not a record with no whole record after it is a round
// a crash cut short (its torn tail: none of it was acknowledged, and it is dropped). What is not a record with whole
// records after it is damage (a bad sector, a bit flipped, a stray write): the records past it were acknowledged
// and are replayed all the same, and the damaged one is the caller's to judge, by what its frame still says.
import { crc32 } from "node:zlib";
import { FRAME_BYTES, MAGIC, type RecordHead } from "./journal.js";

export interface JournalRecord {
  head: RecordHead;
  bytes: Buffer;
}

/** Bytes between whole records of a journal that are not one. */
export interface DamagedRecord {
  /** Where they start in the journal. */
  at: number;
  /** What is wrong with them, for the operator. */
  why: string;
  /** What its frame says, when the frame and its head read as a record's (its payload or checksum is bad). */
  head?: RecordHead;
  length?: number;
}

export interface ReadJournal {
  /** The whole records, in the journal's order. */
  records: JournalRecord[];
  /** The damaged ones, each followed by a whole record (a torn tail is not damage). */
  damaged: DamagedRecord[];
}

const MAGIC_BYTES = Buffer.alloc(4);
MAGIC_BYTES.writeUInt32LE(MAGIC, 0);

/** The whole records of a journal's bytes, in order, past any damage, without its torn tail. */
export function parseJournal(buf: Buffer): JournalRecord[] {
  return readJournal(buf).records;
}

export function readJournal(buf: Buffer): ReadJournal {
  const [records, damaged]: [JournalRecord[], DamagedRecord[]] = [[], []];
  for (let at = 0; at < buf.length; ) {
    const found = recordAt(buf, at);
    if ("record" in found) {
      records.push(found.record);
      at = found.end;
      continue;
    }
    const next = nextRecord(buf, at + 1);
    if (next === undefined) break; // its torn tail
    damaged.push(found);
    at = next;
  }
  return { records, damaged };
}

/** Where the next whole record starts, from `from` on. A record's frame holds zero bytes, a log's JSON lines none. */
function nextRecord(buf: Buffer, from: number): number | undefined {
  for (let at = buf.indexOf(MAGIC_BYTES, from); at !== -1; at = buf.indexOf(MAGIC_BYTES, at + 1)) {
    if ("record" in recordAt(buf, at)) return at;
  }
  return undefined;
}

/** The whole record at `at`, or what is wrong there (with what its frame says, when that reads). */
function recordAt(buf: Buffer, at: number): { record: JournalRecord; end: number } | DamagedRecord {
  if (at + FRAME_BYTES > buf.length) return { at, why: "a record's frame cut short" };
  if (buf.readUInt32LE(at) !== MAGIC) return { at, why: "no record's frame starts there" };
  const [headLength, length, crc] = [
    buf.readUInt32LE(at + 4),
    buf.readUInt32LE(at + 8),
    buf.readUInt32LE(at + 12),
  ];
  const headEnd = at + FRAME_BYTES + headLength;
  const headBytes = buf.subarray(at + FRAME_BYTES, Math.min(headEnd, buf.length));
  const head = headEnd <= buf.length ? headOf(headBytes) : undefined;
  const said = head ? { head, length } : {};
  const end = headEnd + length;
  if (end > buf.length) return { at, why: "its frame says it runs past the journal's end", ...said };
  const bytes = buf.subarray(headEnd, end);
  if (crc32(bytes, crc32(headBytes)) !== crc)
    return { at, why: "its checksum does not match its bytes", ...said };
  if (!head) return { at, why: "its head is not a record's" };
  return { record: { head, bytes }, end };
}

function headOf(bytes: Buffer): RecordHead | undefined {
  let head: Partial<RecordHead> | undefined;
  try {
    head = JSON.parse(bytes.toString("utf8")) as Partial<RecordHead>;
  } catch {
    return undefined;
  }
  const count = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
  if (typeof head?.s !== "string" || typeof head.p !== "string") return undefined;
  if (!count(head.b) || !count(head.f) || !count(head.l) || !count(head.o) || head.f > head.l)
    return undefined;
  return head as RecordHead;
}
