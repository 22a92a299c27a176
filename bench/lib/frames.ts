// Fixed-size frames: every benchmark moves JSON lines of exactly FRAME_BYTES bytes, newline included.
import { encodeLine } from "../../src/protocol/ndjson.js";

export const FRAME_BYTES = 200;

/**
 * The NDJSON line (with its "\n") that `build(pad)` gives, with `pad` a run of "x" long enough to make the line
 * exactly `bytes` bytes. `build` must put `pad` inside a JSON string, and everything else must have a fixed
 * length for the result to hold for every frame built the same way.
 */
export function paddedLine(build: (pad: string) => unknown, bytes = FRAME_BYTES): string {
  return encodeLine(build(padFor(build, bytes)));
}

/** The padding string itself (see paddedLine). */
export function padFor(build: (pad: string) => unknown, bytes = FRAME_BYTES): string {
  const base = Buffer.byteLength(encodeLine(build("")));
  if (base > bytes) throw new Error(`frame is ${base} bytes before padding, more than ${bytes}`);
  const pad = "x".repeat(bytes - base);
  const size = Buffer.byteLength(encodeLine(build(pad)));
  if (size !== bytes) throw new Error(`padded frame is ${size} bytes, expected ${bytes}`);
  return pad;
}
