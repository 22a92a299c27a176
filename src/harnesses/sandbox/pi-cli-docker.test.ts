// pi-cli with `sandbox: docker` on a real Docker engine: the real pi CLI in a --network none container, reaching
// only the fake provider on this host's loopback. Every check the CLI families share runs against it.
import { beforeAll, describe, expect, it, vi } from "vitest";
import { FAKE_KEY } from "../../testing/cli.js";
import { checkKeyNotInAgent } from "../../testing/cli-credentials.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { ensureDockerEngine } from "../../testing/docker-engine.js";
import { dockerSandboxed } from "../../testing/docker-sandbox.js";
import { PiCliFactory } from "../pi-cli/factory.js";
import { piCliCase } from "../pi-cli/testing/case.js";
import { BASE_IMAGE } from "./docker-sandbox.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
});

const { found, start } = describeCliFamily({
  ...piCliCase,
  factory: dockerSandboxed((options) => new PiCliFactory(options)),
  // pi never asks before a tool (its own tests gate the tools up front). Its fake CLIs live in a temp dir the
  // container does not mount: a program outside Brain's install cannot run in the sandbox.
  skip: ["approvals", "garbage"],
});

describe.runIf(found)("pi-cli in a docker sandbox", () => {
  it("never gives the agent in the container the provider's key: it reaches Brain's proxy bridged in", async () => {
    await checkKeyNotInAgent(await start(), ["authorization", `Bearer ${FAKE_KEY}`], "/chat/completions");
  });
});
