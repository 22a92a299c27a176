// A fork of a session on an HTTP agent: the agent keeps the conversation and the checkpoint only its id, so a
// fork that resumed the id would write into its parent's conversation. It starts a new one with the parent's
// history instead (HarnessFactory.agentSide).
import { afterEach, expect, it } from "vitest";
import type { BrainConfig } from "../../protocol/config.js";
import { events, makeBrain, type TestBrain, textOf } from "../../testing/brain.js";
import { type Served, startTsHttpAgent } from "../../testing/nui.js";
import { builtinCatalog, catalogHarnesses } from "../catalog.js";
import { RemoteFactory } from "./remote.js";

let t: TestBrain | undefined;
let agent: Served | undefined;
afterEach(async () => {
  await t?.cleanup();
  agent?.stop();
  t = undefined;
  agent = undefined;
});

it("forks into a new agent conversation that carries the parent's history, never into the parent's", async () => {
  agent = await startTsHttpAgent();
  t = makeBrain({ factories: [new RemoteFactory()] });
  const brain = t.brain;
  const session = await brain.create({ harness: "remote", config: { options: { url: agent.url } } });
  await (await session.prompt("one")).settled;
  await session.checkpoint();
  const fork = await brain.fork(session.id);
  const forked = await fork.prompt("three");
  await forked.settled;
  // The agent's conversation ts-conv-1 is the parent's: resumed by the fork, the fork's turns would be in it.
  const text = textOf(await events(fork), forked.turn);
  expect(text).toMatch(/session=\)$/);
  expect(text).toContain("[Conversation history");
  expect(text).toMatch(/one[\s\S]*three/);
  // The fork's own conversation goes on from its own id, and the parent's from the parent's.
  const again = await fork.prompt("four");
  await again.settled;
  expect(textOf(await events(fork), again.turn)).toMatch(/^ts says: four .*session=ts-conv-2\)$/);
  const parent = await session.prompt("five");
  await parent.settled;
  expect(textOf(await events(session), parent.turn)).toMatch(/^ts says: five .*session=ts-conv-1\)$/);
  // A fork of the fork: a new conversation again, with both sessions' history up to its checkpoint.
  await fork.checkpoint();
  const grandchild = await brain.fork(fork.id);
  const six = await grandchild.prompt("six");
  await six.settled;
  const sixth = textOf(await events(grandchild), six.turn);
  expect(sixth).toMatch(/session=\)$/);
  expect(sixth).toMatch(/one[\s\S]*three[\s\S]*four[\s\S]*six/);
  expect(sixth).not.toContain("five");
});

it("is said by the catalog's remote factory before its code loads; docker's agent keeps its state in the native dir", () => {
  const setup = { config: {} as BrainConfig, configDir: "/", brainHome: "/nonexistent" };
  const { factories } = catalogHarnesses(builtinCatalog(), setup);
  const of = (name: string) => factories.find((f) => f.name === name)?.agentSide?.({});
  expect(of("remote")).toMatch(/keeps the conversation on its side/);
  expect(of("docker")).toBeUndefined();
});
