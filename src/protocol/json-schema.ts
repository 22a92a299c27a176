// Generates the JSON Schema files in schema/ from the zod schemas, for runner authors in other languages.
import { z } from "zod";
import { SessionEvent } from "./events.js";
import { BrainToRunnerFrame, RunnerToBrainFrame } from "./runner.js";

const documents = {
  "runner-to-brain.json": { title: "RunnerToBrainFrame", schema: RunnerToBrainFrame },
  "brain-to-runner.json": { title: "BrainToRunnerFrame", schema: BrainToRunnerFrame },
  "session-event.json": { title: "SessionEvent", schema: SessionEvent },
} as const;

/** file name → file text, exactly as committed in schema/. */
export function generateSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, { title, schema }] of Object.entries(documents)) {
    // "input" describes what goes on the wire: fields with defaults (append_only) may be left out.
    const json = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" });
    out[file] = `${JSON.stringify({ title, ...json }, null, 2)}\n`;
  }
  return out;
}
