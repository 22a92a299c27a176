// A child's output read as text (its stderr, for error messages): decoded as a stream, as a UTF-8 character the
// pipe gives in two reads, decoded a read at a time, would come out as two U+FFFD.
/** Calls `onText` with what `stream` gives, decoded as UTF-8 across reads. */
export function onText(stream: NodeJS.ReadableStream, listener: (text: string) => void): void {
  stream.setEncoding("utf8");
  stream.on("data", listener);
}
