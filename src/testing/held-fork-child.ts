// A child process's script for tests of a fork across a real crash: on the same Brain home, it forks `source`
// ("latest") and its restore of the checkpoint into the fork's native dir never returns, after writing
// "seeding" to stdout; the test kills it there (after the fork's record is written, before its first event).
import path from "node:path";
import { pathToFileURL } from "node:url";

const dist = (module: string) =>
  JSON.stringify(pathToFileURL(path.join(import.meta.dirname, "../../dist/src", module)).href);

/** `made`: the fork's id and idempotency, as a keyed fork passes them (Brain.fork's third argument). */
export function heldForkScript(home: string, source: string, made?: object): string {
  return `import { writeSync } from "node:fs";
    const { makeBrain } = await import(${dist("testing/brain.js")});
    const { CheckpointStore } = await import(${dist("core/checkpoints/index.js")});
    const { brain, store } = makeBrain({ home: ${JSON.stringify(home)} });
    // Alive until killed: a never-settling promise alone lets node exit on its own.
    setInterval(() => {}, 60_000);
    store.checkpoints = (id) => {
      const checkpoints = new CheckpointStore(store.paths(id).checkpoints);
      checkpoints.restore = () => {
        writeSync(1, "seeding\\n");
        return new Promise(() => {});
      };
      return checkpoints;
    };
    await brain.fork(${JSON.stringify(source)}, "latest"${made ? `, ${JSON.stringify(made)}` : ""});`;
}
