// Real captures of the CLIs (in fixtures/cli-transcripts; see its README), decoded one JSON value per line.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const TRANSCRIPTS = join(import.meta.dirname, "./fixtures/cli-transcripts");

export function transcriptLines(path: string): unknown[] {
  return readFileSync(join(TRANSCRIPTS, path), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}
