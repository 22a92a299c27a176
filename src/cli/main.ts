// The `brain` command.
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "./config.js";
import { runDemo } from "./demo.js";
import { describeError } from "./errors.js";
import { runPrompt } from "./run.js";
import { checkpointCommand, forkCommand, restoreCommand, sessionsCommand } from "./sessions.js";
import { createBrain } from "./setup.js";

const USAGE = `usage: brain <command> [options]

  run [--harness NAME] [--session ID] [--model M] [--tool NAME]... [--json] PROMPT
                              one prompt on a new or existing session, streamed as it comes
  sessions ls | show ID | events ID [--after SEQ]
                              the sessions in $BRAIN_HOME (default ~/.brain) and their logs
  checkpoint ID               checkpoint a session's native state
  restore ID --into DIR [--checkpoint CP]
                              write a checkpoint's native files into a fresh directory
  fork ID [--checkpoint CP]   a new session that starts from a checkpoint
  conformance [--json] -- CMD ARGS...
                              check a runner against the runner protocol and the four verification checks
  harnesses                   the harnesses this config offers
  demo                        an offline tour on the echo runner (no model, no key)

  --config FILE               brain.config.json to use (default: ./brain.config.json if present)
`;

export class UsageError extends Error {
  override name = "UsageError";
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "run":
        return await run(rest);
      case "sessions":
      case "checkpoint":
      case "restore":
      case "fork":
      case "harnesses":
        return await withBrain(command, rest);
      case "conformance": {
        const { conformanceCommand } = await import("../conformance/command.js");
        return await conformanceCommand(rest);
      }
      case "demo":
        return await runDemo(parse(rest, {}).values.config as string | undefined);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`brain: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    process.stderr.write(`brain: ${describeError(err)}\n`);
    return err instanceof ConfigError ? 2 : 1;
  }
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>["options"];

function parse(args: string[], options: Options): { values: Record<string, unknown>; positionals: string[] } {
  try {
    return parseArgs({
      args,
      options: { config: { type: "string" }, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

async function run(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    harness: { type: "string" },
    session: { type: "string" },
    model: { type: "string" },
    tool: { type: "string", multiple: true },
    json: { type: "boolean" },
  });
  const prompt = positionals.join(" ");
  if (!prompt) throw new UsageError("run needs a PROMPT");
  const loaded = loadConfig(values.config as string | undefined);
  const defaults = { ...loaded.config.defaults };
  if (values.tool) defaults.tools = values.tool as string[];
  const brain = createBrain(loaded);
  try {
    return await runPrompt(brain, {
      prompt,
      defaults,
      harness: values.harness as string | undefined,
      session: values.session as string | undefined,
      model: values.model as string | undefined,
      json: values.json as boolean | undefined,
    });
  } finally {
    await brain.close();
  }
}

async function withBrain(command: string, args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    into: { type: "string" },
    checkpoint: { type: "string" },
    after: { type: "string" },
    json: { type: "boolean" },
  });
  const brain = createBrain(loadConfig(values.config as string | undefined));
  try {
    switch (command) {
      case "sessions":
        return await sessionsCommand(brain, positionals, {
          after: Number(values.after ?? 0),
          json: !!values.json,
        });
      case "checkpoint":
        return await checkpointCommand(brain, need(positionals[0], "checkpoint needs a session ID"));
      case "restore": {
        const into = need(values.into as string | undefined, "restore needs --into DIR");
        const id = need(positionals[0], "restore needs a session ID");
        return await restoreCommand(brain, id, (values.checkpoint as string | undefined) ?? "latest", into);
      }
      case "fork":
        return await forkCommand(
          brain,
          need(positionals[0], "fork needs a session ID"),
          (values.checkpoint as string | undefined) ?? "latest",
        );
      default: {
        for (const name of brain.harnesses.names()) process.stdout.write(`${name}\n`);
        return 0;
      }
    }
  } finally {
    await brain.close();
  }
}

function need<T>(value: T | undefined, message: string): T {
  if (value === undefined || value === "") throw new UsageError(message);
  return value;
}
