import type { ExitKills } from "../../core/exit-kills.js";
import type { HarnessFactory } from "../../core/harness.js";
import { resolveSessionInput } from "../../core/session-input.js";
import type { StartedRunner } from "../../harnesses/process/started-runner.js";
import { promptTooLarge } from "../../protocol/runner.js";
import { agentLayer, findAgent } from "../agents.js";
import { closeCommandBrain, parse, str, strs, UsageError } from "../args.js";
import { loadConfig } from "../config.js";
import { RUN_OPTIONS } from "../early-runner.js";
import { brainHome, configHarnesses, configHarnessTypes } from "../harness-setup.js";
import { newSessionLayers, type RunOptions, runPrompt } from "../run.js";

export const usage = `run [--harness NAME | --agent FILE|ID] [--session ID] [--model M] [--provider NAME] [--tool NAME]... [--allow TOOL]... [--deny TOOL]... [--json] [--server URL [--token T]] PROMPT
                              one prompt on a new or existing session, streamed as it comes (--server: on the daemon)`;

/** `early`: the runner main.ts spawned before this module loaded; taken by the session's harness or discarded. */
export async function command(args: string[], early?: StartedRunner, exits?: ExitKills): Promise<number> {
  const { values, positionals } = parse(args, RUN_OPTIONS);
  const prompt = positionals.join(" ");
  if (!prompt) throw new UsageError("run needs a PROMPT");
  const tooLarge = promptTooLarge(prompt);
  if (tooLarge) throw new UsageError(tooLarge);
  const server = str(values.server);
  if (server) {
    // On the daemon: the session lives there, this process only prompts and follows (the client loads only then).
    const { remoteRun } = await import("./remote/run.js");
    return remoteRun({
      server,
      token: str(values.token),
      prompt,
      harness: str(values.harness),
      agent: str(values.agent),
      session: str(values.session),
      model: str(values.model),
      ...(str(values.provider) ? { provider: str(values.provider) } : {}),
      ...(values.tool ? { tools: strs(values.tool) } : {}),
      json: values.json === true,
      allow: strs(values.allow),
      deny: strs(values.deny),
    });
  }
  const loaded = loadConfig(str(values.config));
  // --agent: an agent definition (nui's ADL) decides the harness and the session's settings.
  const agent = str(values.agent)
    ? findAgent(str(values.agent)!, brainHome(), configHarnessTypes(loaded))
    : undefined;
  for (const field of agent?.ignored ?? [])
    process.stderr.write(`[agent ${agent!.id}: ${field} is not supported by Brain; ignored]\n`);
  const options: RunOptions = {
    prompt,
    defaults: loaded.config.defaults ?? {},
    ...(agent ? { agent: agentLayer(agent) } : {}),
    harness: str(values.harness),
    session: str(values.session),
    model: str(values.model),
    ...(values.tool ? { tools: strs(values.tool) } : {}),
    // A name from the config's "providers"; Brain refuses an unknown one, listing the configured names.
    ...(str(values.provider) ? { provider: str(values.provider) } : {}),
    json: values.json === true,
    allow: strs(values.allow),
    deny: strs(values.deny),
  };
  const home = brainHome();
  const harnesses = configHarnesses(loaded, home).factories;
  prestartHarness(harnesses, options, early);
  // Not this session's runner after all: killed now rather than left running through the turn.
  void early?.discard();
  // The session store and the rest of Brain load while the runner starts.
  const { createBrain } = await import("../setup.js");
  // The operator's own run: a session naming no provider may use the usual variables (OPENAI_API_KEY, …).
  const brain = createBrain(loaded, home, {
    harnesses,
    providerEnv: process.env,
    ...(exits ? { exits } : {}),
  });
  try {
    return await runPrompt(brain, options);
  } finally {
    await closeCommandBrain(brain);
  }
}

/**
 * Starts the runner of the session this run will create, when that is already certain (no --session, which may
 * name an existing session of another harness). Input the resolution refuses starts nothing: runPrompt resolves
 * it again and reports the mistake.
 */
function prestartHarness(harnesses: HarnessFactory[], options: RunOptions, early?: StartedRunner): void {
  if (options.session) return;
  const byName = new Map(harnesses.map((h) => [h.name, h]));
  let name: string;
  try {
    name = resolveSessionInput(newSessionLayers(options), [...byName.keys()], (h) => byName.get(h)).harness;
  } catch {
    return;
  }
  byName.get(name)?.prestart?.(early);
}
