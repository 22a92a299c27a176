import { parse, str, strs, UsageError } from "../args.js";
import { loadConfig } from "../config.js";
import { runPrompt } from "../run.js";
import { createBrain } from "../setup.js";

export const usage = `run [--harness NAME] [--session ID] [--model M] [--tool NAME]... [--allow TOOL]... [--deny TOOL]... [--json] PROMPT
                              one prompt on a new or existing session, streamed as it comes`;

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    harness: { type: "string" },
    session: { type: "string" },
    model: { type: "string" },
    tool: { type: "string", multiple: true },
    allow: { type: "string", multiple: true },
    deny: { type: "string", multiple: true },
    json: { type: "boolean" },
  });
  const prompt = positionals.join(" ");
  if (!prompt) throw new UsageError("run needs a PROMPT");
  const loaded = loadConfig(str(values.config));
  const defaults = { ...loaded.config.defaults };
  if (values.tool) defaults.tools = strs(values.tool);
  const brain = createBrain(loaded);
  try {
    return await runPrompt(brain, {
      prompt,
      defaults,
      harness: str(values.harness),
      session: str(values.session),
      model: str(values.model),
      json: values.json === true,
      allow: strs(values.allow),
      deny: strs(values.deny),
    });
  } finally {
    await brain.close();
  }
}
