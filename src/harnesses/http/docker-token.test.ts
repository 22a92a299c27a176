// The `docker` harness's container token: a published port answers every process on this host and every container
// on Docker's network, so each container gets a token of its own (BRAIN_AGENT_TOKEN), which Brain sends with every
// request and Brain's agent servers require. The fake docker CLI runs the TypeScript test agent as the container.
// A container's own PATH and HOME reach it, never the docker CLI Brain runs; no value is in docker's argv or
// environment.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, tempDir } from "../../testing/brain.js";
import { fakeDocker, readCalls } from "../../testing/nui.js";
import { DockerFactory } from "./docker.js";
import { DockerCli } from "./docker-cli.js";

let t: TestBrain | undefined;
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  for (const fn of cleanups.splice(0)) await fn();
});

describe("docker: the container's token", () => {
  it("is the container's own, sent with every request; the port refuses a request without it", async () => {
    const state = tempDir("fake-docker-");
    cleanups.push(() => rmSync(state, { recursive: true, force: true }));
    const cli = new DockerCli(fakeDocker, { ...process.env, FAKE_DOCKER_STATE: state });
    t = makeBrain({ factories: [new DockerFactory("docker", cli, { healthMs: 20_000 })] });
    const session = await t.brain.create({
      harness: "docker",
      config: { options: { image: "ts-agent", containerPort: 9090 } },
    });
    const turn = await session.prompt("with a token");
    expect((await turn.settled).status).toBe("completed");
    const id = readCalls(state).find((c) => c[0] === "port")?.[1];
    const container = JSON.parse(readFileSync(join(state, "containers", `${id}.json`), "utf8"));
    const token: string = container.env.BRAIN_AGENT_TOKEN;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const url = `http://127.0.0.1:${container.port}`;
    expect((await fetch(`${url}/info`)).status).toBe(401);
    expect((await fetch(`${url}/info`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    // Nothing a session's clients read carries it, not even the agent's own text.
    const said = await session.prompt("say-env BRAIN_AGENT_TOKEN");
    expect((await said.settled).status).toBe("completed");
    const logged = JSON.stringify(await events(session));
    expect(logged).toContain("BRAIN_AGENT_TOKEN=[redacted:BRAIN_AGENT_TOKEN]");
    expect(logged).not.toContain(token);
    await t.brain.closeSession(session.id);
  });
});

describe("docker: the container's environment", () => {
  function dockerBrain() {
    const state = tempDir("fake-docker-");
    cleanups.push(() => rmSync(state, { recursive: true, force: true }));
    const cli = new DockerCli(fakeDocker, { ...process.env, FAKE_DOCKER_STATE: state });
    t = makeBrain({ factories: [new DockerFactory("docker", cli, { healthMs: 20_000 })] });
    return { brain: t.brain, state };
  }

  it("gives the container its PATH and HOME, while the docker CLI keeps Brain's", async () => {
    const { brain, state } = dockerBrain();
    // The fake CLI is a node script found through PATH (#!/usr/bin/env node): given the container's PATH it
    // could not start, as a real docker on Brain's PATH would not be found.
    const env = { PATH: "/opt/agent/bin", HOME: "/home/agent", GREETING: "hi", DOCKER_SECRET: "d0ck3r" };
    const session = await brain.create({
      harness: "docker",
      config: { options: { image: "ts-agent", containerPort: 9090, env } },
    });
    const turn = await session.prompt("with its own PATH");
    expect((await turn.settled).status).toBe("completed");
    const run = readCalls(state).find((c) => c[0] === "run")!;
    const id = readCalls(state).find((c) => c[0] === "port")?.[1];
    const container = JSON.parse(readFileSync(join(state, "containers", `${id}.json`), "utf8"));
    expect(container.env).toMatchObject(env);
    // No value in docker's argv (any local user's process listing), PATH, HOME and DOCKER_* included, nor in its
    // own environment: a file only Brain's user may read, gone once docker has read it.
    const token = container.env.BRAIN_AGENT_TOKEN;
    for (const value of [...Object.values(env), token]) expect(run.join(" ")).not.toContain(value);
    expect(container.cliEnv).not.toContain("GREETING");
    expect(container.cliEnv).not.toContain("BRAIN_AGENT_TOKEN");
    expect(container.envFile).toMatchObject({ mode: 0o600, dirMode: 0o700 });
    expect(existsSync(dirname(container.envFile.path))).toBe(false);
    await brain.closeSession(session.id);
  });

  it("moves docker_args' -e NAME=VALUE into the env file: the value is in no docker argv", async () => {
    const { brain, state } = dockerBrain();
    const docker_args = [
      "-e",
      "API_KEY=argv-secret-1",
      "--env=TOKEN_2=argv-secret-2",
      "-eDB_PASS=argv-secret-3",
      "-e=SECRET_4=argv-secret-4",
      "--env",
      "PASS_TOKEN=argv-secret-5",
    ];
    const session = await brain.create({
      harness: "docker",
      config: {
        options: { image: "ts-agent", containerPort: 9090, env: { API_KEY: "overridden" }, docker_args },
      },
    });
    const turn = await session.prompt("with -e in docker_args");
    expect((await turn.settled).status).toBe("completed");
    const id = readCalls(state).find((c) => c[0] === "port")?.[1];
    const container = JSON.parse(readFileSync(join(state, "containers", `${id}.json`), "utf8"));
    // As docker gave them before (-e beats --env-file), through the 0600 file.
    expect(container.env).toMatchObject({
      API_KEY: "argv-secret-1",
      TOKEN_2: "argv-secret-2",
      DB_PASS: "argv-secret-3",
      SECRET_4: "argv-secret-4",
      PASS_TOKEN: "argv-secret-5",
    });
    expect(container.envFile).toMatchObject({ mode: 0o600 });
    const argv = JSON.stringify(readCalls(state));
    for (const n of [1, 2, 3, 4, 5]) expect(argv).not.toContain(`argv-secret-${n}`);
    // Nor in what a client reads: the agent's echo of them in the log, the session's record as shown.
    for (const name of ["API_KEY", "SECRET_4"]) {
      expect((await (await session.prompt(`say-env ${name}`)).settled).status).toBe("completed");
    }
    const shown = JSON.stringify([await events(session), brain.shownRecord(await brain.record(session.id))]);
    expect(shown).toContain("[redacted:SECRET_4]");
    // Secret-named ones, as for options.env (core/redact.ts SECRET_NAME): DB_PASS is not such a name.
    for (const n of [1, 2, 4, 5]) expect(shown).not.toContain(`argv-secret-${n}`);
    await brain.closeSession(session.id);
  });

  it("refuses a value docker's env file cannot carry, naming the variable, and starts nothing", async () => {
    const { brain, state } = dockerBrain();
    const session = await brain.create({
      harness: "docker",
      config: { options: { image: "ts-agent", containerPort: 9090, env: { CERT: "line 1\nline 2" } } },
    });
    const settled = await (await session.prompt("x")).settled;
    expect(settled.error?.message).toMatch(
      /"CERT" cannot be passed to the container: its value holds a line break/,
    );
    expect(readCalls(state).some((c) => c[0] === "run")).toBe(false);
  });
});
