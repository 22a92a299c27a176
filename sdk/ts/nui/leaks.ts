// A promise an agent's code rejected with no handler attached ends a Node process by default (since Node 15), and a
// host's process serves every run its agent is given: one run's leak took all the others down with it. The host
// catches them instead. A rejection is attributed by the async context it was made in: one made within a run
// (anything the run started, timers and callbacks included) fails that run, with an error event naming it; one
// made outside every run (the module's own code, a callback of a library started before any run), or in a run
// that has already ended, cannot be pinned on a running run and is only written to stderr, naming what was
// rejected. The host serves on either way.
import { AsyncLocalStorage } from "node:async_hooks";
import { failure } from "./failure.js";

export interface RunScope {
  runId: string;
  /** Fails the run with this rejection, or says on stderr that it came too late to fail it. */
  leaked(reason: unknown): void;
}

const scopes = new AsyncLocalStorage<RunScope>();
let installed = false;

/** Called as a host starts serving (before anything of the agent's can run in it): see above. */
export function catchLeaks(agentName: string): void {
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", (reason) => {
    const run = scopes.getStore();
    if (run) return run.leaked(reason);
    process.stderr.write(
      `[${agentName}] an unhandled promise rejection outside any run (the host serves on): ${failure(reason, "a promise")}\n`,
    );
  });
}

/** Runs `body` as run `scope`: rejections left unhandled within it are the run's (see above). */
export function withinRun<T>(scope: RunScope, body: () => T): T {
  return scopes.run(scope, body);
}
