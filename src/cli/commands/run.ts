import { promptTooLarge } from "../../protocol/runner.js";
import { agentLayer, findAgent } from "../agents.js";
import { parse, str, strs, UsageError } from "../args.js";
import { loadConfig } from "../config.js";
import { runPrompt } from "../run.js";
import { brainHome, configHarnessTypes, createBrain } from "../setup.js";

export const usage = `run [--harness NAME | --agent FILE|ID] [--session ID] [--model M] [--provider NAME] [--tool NAME]... [--allow TOOL]... [--deny TOOL]... [--json] [--server URL [--token T]] PROMPT
                              one prompt on a new or existing session, streamed as it comes (--server: on the daemon)`;

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    harness: { type: "string" },
    agent: { type: "string" },
    session: { type: "string" },
    model: { type: "string" },
    provider: { type: "string" },
    tool: { type: "string", multiple: true },
    allow: { type: "string", multiple: true },
    deny: { type: "string", multiple: true },
    json: { type: "boolean" },
    server: { type: "string" },
    token: { type: "string" },
  });
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
  const brain = createBrain(loaded);
  try {
    return await runPrompt(brain, {
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
    });
  } finally {
    await brain.close();
  }
}
