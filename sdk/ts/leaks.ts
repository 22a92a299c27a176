// A promise a runner's or an agent's code rejected with no handler attached ends a Node process by default (since
// Node 15), and one host process serves many turns (a shared runner's attachments, a nui agent's runs): one leak took
// all the others down with it. Both SDKs' hosts catch them instead, here. A rejection is attributed by the async
// context it was made in: one made within a scope (a turn, a run: anything it started, timers and callbacks included)
// is given to that scope, which fails with it; one made outside every scope (the module's own code, a callback of a
// library started before any turn) can be pinned on nothing running and is only reported. The host serves on.
import { AsyncLocalStorage } from "node:async_hooks";

export interface LeakScope {
  /** Fails the scope's turn or run with this rejection, or reports that it came too late to fail it. */
  leaked(reason: unknown): void;
}

const scopes = new AsyncLocalStorage<LeakScope>();
let installed = false;

/**
 * Called as a host starts serving (before anything of the runner's or agent's can run in it): see above. `outside`
 * reports a rejection made outside every scope. Once per process: the first host's `outside` is the one used.
 */
export function catchLeaks(outside: (reason: unknown) => void): void {
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", (reason) => {
    // A throw here would be an uncaught exception, the very end of the process this listener is for.
    try {
      const scope = scopes.getStore();
      if (scope) scope.leaked(reason);
      else outside(reason);
    } catch (err) {
      process.stderr.write(`an unhandled promise rejection could not be reported: ${String(err)}\n`);
    }
  });
}

/** Runs `body` within `scope`: rejections left unhandled within it are the scope's (see above). */
export function withinScope<T>(scope: LeakScope, body: () => T): T {
  return scopes.run(scope, body);
}
