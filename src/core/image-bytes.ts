// A prompt's image as a client may send it: base64 alone or behind a data: URL prefix, its type given or left for
// the bytes to tell (PromptImage says "recognised from the bytes when absent"). What reads one back needs both.

/** The type of a PNG, JPEG, GIF or WebP image recognised from its first bytes (12 are enough), else undefined. */
export function imageTypeOf(bytes: Buffer): string | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (bytes.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif";
  if (
    bytes.subarray(0, 4).toString("latin1") === "RIFF" &&
    bytes.subarray(8, 12).toString("latin1") === "WEBP"
  )
    return "image/webp";
  return undefined;
}

const DATA_URL = /^data:([^;,]*);base64,/;

/** The base64 of `data` without a data: URL prefix, and the type that prefix named, if any. */
export function bareBase64(data: string): { base64: string; declared?: string } {
  const prefix = DATA_URL.exec(data);
  if (!prefix) return { base64: data };
  return { base64: data.slice(prefix[0].length), ...(prefix[1] ? { declared: prefix[1] } : {}) };
}
