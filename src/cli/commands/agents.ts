// `brain agents ls | show FILE|ID`: agent definitions (nui's ADL, YAML or JSON) in $BRAIN_HOME/agents and in
// installed extensions. Run one with `brain run --agent FILE|ID PROMPT`.
import { listAgents } from "../../agents/catalog.js";
import { recordSecrets } from "../../core/credentials.js";
import { envSecrets, Redactor } from "../../core/redact.js";
import { extensionsDir, listExtensions } from "../../harnesses/ext/extensions.js";
import { agentLayer, agentsDir, findAgent } from "../agents.js";
import { need, parse, refuseExtra, str, UsageError } from "../args.js";
import { loadConfig } from "../config.js";
import { brainHome, configHarnessTypes, configSecrets } from "../setup.js";

export const usage = `agents ls [--json] | show FILE|ID
                              agent definitions in $BRAIN_HOME/agents and extensions (run one: run --agent FILE|ID)`;

export const verbs = ["ls", "show"] as const;

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: "boolean" } });
  const [verb = "ls", target] = positionals;
  if (verb === "ls") refuseExtra(positionals, 1, "agents ls takes no arguments");
  if (verb === "show") refuseExtra(positionals, 2, "agents show takes one FILE or ID");
  const home = brainHome();
  // Checked against the harnesses this config's host runs: a type it cannot run is named here, not at run time.
  const loaded = loadConfig(str(values.config));
  const types = configHarnessTypes(loaded, home);
  switch (verb) {
    case "ls": {
      const { extensions, problems: extProblems } = listExtensions(extensionsDir(home));
      const { agents, problems } = listAgents(agentsDir(home), extensions, types);
      for (const agent of agents) {
        const d = agent.definition;
        if (values.json) {
          process.stdout.write(
            `${JSON.stringify({ id: agent.id, name: d.name, harness: d.harness.type, file: agent.file, ignored: agent.ignored })}\n`,
          );
        } else {
          process.stdout.write(
            `${agent.id.padEnd(24)} ${d.harness.type.padEnd(20)} ${d.name}${d.description ? ` — ${d.description}` : ""}\n`,
          );
        }
      }
      for (const problem of [...extProblems, ...problems]) process.stderr.write(`invalid: ${problem}\n`);
      if (agents.length === 0 && problems.length === 0 && !values.json) {
        process.stderr.write(
          `no agent definitions in ${agentsDir(home)} (YAML or JSON files with adl: "1.0")\n`,
        );
      }
      return problems.length || extProblems.length ? 1 : 0;
    }
    case "show": {
      const agent = findAgent(need(target, "agents show needs a FILE or an agent ID"), home, types);
      const session = agentLayer(agent);
      // As a session made from it is shown (Brain.shownRecord): the credentials it holds written out (its env,
      // its MCP servers' headers and env) redacted, and the host's secrets.
      const secrets = recordSecrets({ ...session, config: session.config ?? {} }, process.env);
      const redactor = new Redactor([...envSecrets(process.env), ...configSecrets(loaded, home), ...secrets]);
      const shown = {
        id: agent.id,
        file: agent.file,
        session: redactor.redactDeep(session),
        ignored: agent.ignored,
      };
      process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
      return 0;
    }
    default:
      throw new UsageError(`unknown agents verb "${verb}": use ls or show FILE|ID`);
  }
}
