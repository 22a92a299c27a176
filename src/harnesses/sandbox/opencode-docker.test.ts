// opencode with `sandbox: docker` on a real Docker engine: the real opencode server runs in a --network none
// container, its port published back to this host's loopback through the container's network namespace, and it
// reaches only the fake provider on this host's loopback. The shared checks it needs run against it, bound tool
// mode too (the tool endpoint's socket is in a directory the container mounts).
import { beforeAll, describe, expect, it, vi } from "vitest";
import { events } from "../../testing/brain.js";
import { FAKE_KEY } from "../../testing/cli.js";
import { checkKeyNotInAgent } from "../../testing/cli-credentials.js";
import {
  type CliFamilyCase,
  describeCliFamily,
  interruptsMidStream,
  shellTurn,
} from "../../testing/cli-family.js";
import { docker, ensureDockerEngine, sessionContainers } from "../../testing/docker-engine.js";
import { dockerSandboxed } from "../../testing/docker-sandbox.js";
import { OpencodeFactory } from "../opencode/factory.js";
import { opencodeCase } from "../opencode/testing/case.js";
import { BASE_IMAGE } from "./docker-sandbox.js";

// opencode's 185 MB binary can take tens of seconds to start on a loaded machine.
vi.setConfig({ testTimeout: 400_000, hookTimeout: 600_000 });

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
});

const family: CliFamilyCase = {
  ...opencodeCase,
  factory: dockerSandboxed((options) => new OpencodeFactory(options)),
};
const { found, start } = describeCliFamily(family);

describe.runIf(found)("opencode in a docker sandbox", () => {
  it("runs its server and shell tool inside a container without network, interrupts, and removes it on close", async () => {
    const b = await start();
    const session = await b.create();
    await shellTurn(b, session, family);
    const [id] = sessionContainers(session.id);
    expect(docker("inspect", "-f", "{{.HostConfig.NetworkMode}}", id!)).toBe("none");
    // The server is a process of the container, not of this host.
    expect(docker("top", id!)).toContain("opencode");
    await interruptsMidStream(session);
    const next = await session.prompt("NOTOOL say hello");
    expect((await next.settled).status).toBe("completed");
    expect((await events(session)).some((e) => e.type === "assistant.message")).toBe(true);
    await b.t.brain.closeSession(session.id);
    expect(sessionContainers(session.id)).toEqual([]);
  });

  it("never gives the agent in the container the provider's key: it reaches Brain's proxy bridged in", async () => {
    await checkKeyNotInAgent(await start(), ["authorization", `Bearer ${FAKE_KEY}`], "/chat/completions");
  });
});
