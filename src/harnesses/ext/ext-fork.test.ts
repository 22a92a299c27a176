// A fork of a session on an extension harness: the host keeps the conversation and the checkpoint only its id
// (nui-session.json), so a fork that resumed the id would write into its parent's conversation. Through the
// catalog's factory, which says so before the family's code loads, the fork starts a new conversation with the
// parent's history instead (HarnessFactory.agentSide).
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Session } from "../../core/session.js";
import { events, textOf } from "../../testing/brain.js";
import { catalogFactories, tsAgent, useScratch, writeExtension } from "../../testing/nui.js";
import { installExtension } from "./install.js";

const { scratch, brain: scratchBrain } = useScratch();

async function said(session: Session, prompt: string): Promise<string> {
  const turn = await session.prompt(prompt);
  expect((await turn.settled).status).toBe("completed");
  return textOf(await events(session), turn.turn);
}

it("forks into a new host conversation that carries the parent's history, never into the parent's", async () => {
  const home = scratch("brain-ext-fork-home-");
  const source = writeExtension(scratch("brain-ext-fork-src-"), "ts-stdio", {
    transport: "stdio",
    command: ["node", tsAgent, "stdio"],
  });
  await installExtension(source, join(home, "extensions"));
  const { factories, problems } = catalogFactories({
    brainHome: home,
    hostHome: scratch("brain-ext-fork-hosthome-"),
  });
  expect(problems).toEqual([]);
  const { brain } = scratchBrain({ factories, home });
  const session = await brain.create({ harness: "ext:ts-stdio/echo" });
  await said(session, "one");
  await session.checkpoint();
  const fork = await brain.fork(session.id);
  const three = await said(fork, "three");
  expect(three).toMatch(/session=\)$/);
  expect(three).toMatch(/\[Conversation history[\s\S]*one[\s\S]*three/);
  expect(await said(session, "five")).toMatch(/^ts says: five .*session=ts-conv-1\)$/);
});
