// A runner in a few lines of JS, for `node --input-type=module -e`: the tests of the process harness write one
// to keep or break exactly one rule of the runner protocol. This is the frame plumbing they all share.

/**
 * The node arguments of a runner that reads one JSON frame a line from stdin and runs `handle` on each, with
 * `f` (the frame), `send(frame)`, `reply(result)` (the answer to `f`) and `fs` in scope; `setup` runs first, at
 * the module's top level. It exits when stdin ends.
 */
export function inlineRunnerArgs(setup: string, handle: string): string[] {
  const script = `
import fs from "node:fs";
${setup}
let buf = "";
const send = (f) => process.stdout.write(JSON.stringify(f) + "\\n");
process.stdin.on("data", (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) { const line = buf.slice(0, i); buf = buf.slice(i + 1); handle(JSON.parse(line)); }
});
process.stdin.on("end", () => process.exit(0));
function handle(f) {
  const reply = (result) => send({ attachment: f.attachment, ...(f.turn ? { turn: f.turn } : {}), id: f.id, result });
  ${handle}
}`;
  return ["--input-type=module", "-e", script];
}
