// A fork of a session on an HTTP agent: the agent keeps the conversation and the checkpoint only its id, so a
// fork that resumed the id would write into its parent's conversation. It starts a new one with the parent's
// history instead (HarnessFactory.agentSide).
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { BrainConfig } from "../../protocol/config.js";
import { events, makeBrain, type TestBrain, tempDir, textOf } from "../../testing/brain.js";
import { fakeDocker, type Served, startTsHttpAgent } from "../../testing/nui.js";
import { builtinCatalog, catalogHarnesses } from "../catalog.js";
import { DockerFactory } from "./docker.js";
import { DockerCli } from "./docker-cli.js";
import { RemoteFactory } from "./remote.js";

let t: TestBrain | undefined;
let agent: Served | undefined;
let state: string | undefined;
afterEach(async () => {
  await t?.cleanup();
  if (state) rmSync(state, { recursive: true, force: true });
  state = undefined;
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

it("is said by the catalog's remote factory before its code loads; docker's by its session's resume file", async () => {
  const setup = { config: {} as BrainConfig, configDir: "/", brainHome: "/nonexistent" };
  const { factories } = catalogHarnesses(builtinCatalog(), setup);
  const of = (name: string) => factories.find((f) => f.name === name)?.agentSide?.({});
  expect(of("remote")).toMatch(/keeps the conversation on its side/);
  expect(of("docker")).toBeUndefined();
  // A docker session whose agent never said it keeps its state in the native dir forks into a new conversation.
  state = tempDir("docker-native-");
  const docker = factories.find((f) => f.name === "docker");
  expect(await docker?.agentSide?.({}, state)).toMatch(/did not say it keeps its state in the native dir/);
});

it("forks a docker session whose agent keeps no state in the native dir into a new conversation with its history", async () => {
  // The fake docker runs the image's agent here; ts-agent's /info offers no checkpoint or verify.
  state = tempDir("fake-docker-");
  const cli = new DockerCli(fakeDocker, { ...process.env, FAKE_DOCKER_STATE: state });
  t = makeBrain({ factories: [new DockerFactory("docker", cli, { healthMs: 20_000 })] });
  const options = { image: "ts-agent", containerPort: 9090 };
  const session = await t.brain.create({ harness: "docker", config: { options } });
  await (await session.prompt("one")).settled;
  await session.checkpoint();
  const fork = await t.brain.fork(session.id);
  const forked = await fork.prompt("three");
  await forked.settled;
  // Its own container knows no ts-conv-1: resumed by that id, the fork would go on without the parent's turns.
  const text = textOf(await events(fork), forked.turn);
  expect(text).toMatch(/session=\)$/);
  expect(text).toContain("[Conversation history");
  expect(text).toMatch(/one[\s\S]*three/);
  // What told the fork so: the parent's resume file, written as its agent answered /info.
  const resume = JSON.parse(readFileSync(join(t.store.paths(session.id).native, "nui-session.json"), "utf8"));
  expect(resume).toEqual({ sessionId: "ts-conv-1", stateInNativeDir: false });
});
