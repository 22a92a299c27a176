// Reading the api harness's conversation file at open, within a bound. It was read whole: a file made huge, or a
// special file a restore planted in its place (/dev/zero, a FIFO), grew the daemon without limit or hung it. Only
// what follows the last compaction is ever sent, so only the file's tail is read, and only a regular file.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";

/** The floor of what is read: a result is kept in the file up to KEPT_RESULT_CHARS (megabytes) though sent shortened. */
const MIN_READ_BYTES = 64 << 20;
/** Bytes in the file per token sent: 4 characters a token, up to 2 bytes each in JSON, and room to spare. */
const BYTES_PER_TOKEN = 16;

/** How much of the file is read: what a conversation compacted at `compactAtTokens` holds since its summary. */
export function conversationReadLimit(compactAtTokens: number): number {
  return Math.max(MIN_READ_BYTES, compactAtTokens * BYTES_PER_TOKEN);
}

export interface ConversationText {
  text: string;
  /** The file was longer than the limit: `text` starts at its first whole line within the last `limit` bytes. */
  cut: boolean;
  size: number;
}

/** The file's text, or its tail past `limit` bytes; undefined when there is no file. */
export function readConversationFile(path: string, limit: number): ConversationText | undefined {
  let fd: number;
  try {
    // Non-blocking: a FIFO in its place is refused below, not waited on for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      throw new Error(
        `${path} is ${kindOf(stats)}, not a regular file: the api harness keeps its conversation in a regular file; remove it (or restore the session's own file in its place) and open the session again`,
      );
    }
    const size = stats.size;
    // One byte before the tail too: a newline there says the tail starts with a whole line, kept.
    const start = Math.max(0, size - limit - 1);
    const buffer = Buffer.alloc(size - start);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, start + read);
      if (n === 0) break;
      read += n;
    }
    let text = buffer.toString("utf8", 0, read);
    // The first line of a tail is a part of one (or, from the byte before it, only its newline): it is left out.
    if (start > 0) text = text.slice(text.indexOf("\n") + 1 || text.length);
    return { text, cut: start > 0, size };
  } finally {
    closeSync(fd);
  }
}

/** Refusal of a file whose tail holds no compaction: what the next request needs is longer than Brain reads. */
export function tooLongError(path: string, size: number, limit: number): Error {
  return new Error(
    `${path} holds ${size} bytes, and its last ${limit} bytes hold no compaction: the conversation since its last summary is longer than the api harness reads (set by compact_at_tokens), and past any model's context; start a new session, or lower compact_at_tokens so that long conversations are compacted sooner`,
  );
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  return "a special file";
}
