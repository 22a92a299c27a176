// The value of a `docker run --mount` that binds a host directory at its own path. Docker reads the value as one
// CSV record: a comma in a path ends its field and starts another (`/h,source=/` would mount the host's root), a
// quote is refused or opens a quoted field, a line break ends the record. Such a path is refused, in words that say
// which one and why, rather than quoted: the exec shims read the values back by splitting on commas
// (devcontainer/exec-shim.ts mountedPaths), and Brain's own paths (its home, its install, the temp dir) need none.
import { isAbsolute } from "node:path";
import { HarnessError } from "../core/harness.js";

/**
 * `source=PATH,target=PATH,type=bind[,readonly]`. `what` names the path in the error (the session's native dir,
 * Brain's install dir…), `harness` the family refusing it.
 */
export function bindMount(path: string, harness: string, what: string, readOnly = false): string {
  if (!isAbsolute(path) || /[,"\n\r]/.test(path)) {
    throw new HarnessError(
      "brain_error",
      `harness "${harness}": ${what} ${JSON.stringify(path)} cannot be mounted into its container (Docker's --mount needs an absolute path without commas, quotes or line breaks)`,
    );
  }
  return `source=${path},target=${path},type=bind${readOnly ? ",readonly" : ""}`;
}
