// `npm start` until the daemon lands: a tour of a session on the offline echo runner. No model, no key.

import { closeCommandBrain } from "./args.js";
import { loadConfig } from "./config.js";
import { textPrinter } from "./output.js";
import { createBrain } from "./setup.js";

export async function runDemo(configFile?: string): Promise<number> {
  const brain = createBrain(loadConfig(configFile));
  const say = (line: string) => process.stderr.write(`\n» ${line}\n`);
  try {
    const session = await brain.create({ harness: "echo", config: { tools: ["echo"] } });
    session.log.subscribe(textPrinter());
    say(`session ${session.id} on the echo runner; its events go to a durable log`);
    for (const prompt of ["Hello, Brain!", "echo: a reverse tool call, checked, logged and answered"]) {
      say(`prompt: ${prompt}`);
      await (await session.prompt(prompt)).settled;
    }
    const checkpoint = await session.checkpoint();
    say(
      `checkpoint ${checkpoint.id}: ${checkpoint.files.map((f) => `${f.path} (${f.size} bytes)`).join(", ")}`,
    );
    const fork = await brain.fork(session.id, checkpoint.id);
    fork.log.subscribe(textPrinter());
    say(`forked into session ${fork.id}; it continues the same conversation`);
    await (await fork.prompt("Where are we?")).settled;
    say(`try: npx brain sessions ls · npx brain sessions events ${session.id} · npx brain run "hi"`);
    return 0;
  } finally {
    await closeCommandBrain(brain);
  }
}
