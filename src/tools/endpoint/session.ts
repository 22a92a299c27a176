// A tool endpoint bound to one harness's session: calls made while a turn runs go through the session's
// `call` (the runner's reverse tool.call path), under that turn and cancelled with it.
import type { ContainerUser, HarnessOptions } from "../../core/harness.js";
import { textResult } from "../tool-service.js";
import { openToolEndpoint, type ToolEndpoint } from "./endpoint.js";

export interface RunningTurnRef {
  id: string;
  signal: AbortSignal;
}

/**
 * The endpoint a harness hands its agent. `current` is the harness's running turn: a call between turns
 * (a CLI's background work) is refused, never run.
 */
export function sessionToolEndpoint(
  options: Pick<HarnessOptions, "tools" | "call">,
  current: () => RunningTurnRef | undefined,
  settings: { name?: string; node?: string; parent?: string; user?: ContainerUser | undefined } = {},
): Promise<ToolEndpoint> {
  return openToolEndpoint({
    ...settings,
    tools: options.tools,
    call: (call, signal) => {
      const turn = current();
      if (!turn) return Promise.resolve(textResult(`tool "${call.name}" refused: no turn is running`, true));
      return options.call(turn.id, call, AbortSignal.any([signal, turn.signal]));
    },
  });
}
