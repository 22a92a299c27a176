// claude-code with `sandbox: docker` and a provider that is not on this host's loopback: the container has no
// network, but the CLI reaches its provider through Brain's credential proxy, bridged in, and the proxy reaches the
// provider from this host; so the turn completes. With the proxy off the CLI would need the provider itself, and
// the session is refused, saying why and what to change. The "remote" provider is the fake one on another of this
// host's own addresses: remote by address, and no test reaches the internet.
import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { events, makeBrain, textOf } from "../../testing/brain.js";
import { FAKE_KEY } from "../../testing/cli.js";
import { docker, ensureDockerEngine, sessionContainers } from "../../testing/docker-engine.js";
import { dockerSandboxed } from "../../testing/docker-sandbox.js";
import { type FakeProvider, shellAgent, startFakeProvider } from "../../testing/fake-provider/index.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";
import { BASE_IMAGE } from "./docker-sandbox.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

/** One of this host's IPv4 addresses that is not loopback (a NIC's, or Docker's bridge gateway). */
const address = Object.values(networkInterfaces())
  .flat()
  .find((one) => one && one.family === "IPv4" && !one.internal)?.address;

let provider: FakeProvider;

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
  provider = await startFakeProvider({ host: address!, apiKey: FAKE_KEY });
  provider.setFallback(shellAgent());
});

afterAll(async () => {
  await provider?.close();
});

const sandboxed = (credentialProxy: boolean) =>
  dockerSandboxed(
    (options) =>
      new ClaudeCodeFactory({ ...options, ...(credentialProxy ? {} : { credentialProxy: false }) }),
  )({});

describe.runIf(address)("claude-code in a docker sandbox with a provider off this host's loopback", () => {
  it("completes a turn through the credential proxy, the container still without network", async () => {
    expect(provider.url).not.toContain("127.0.0.1");
    const t = makeBrain({
      factories: [sandboxed(true)],
      provider: { base_url: provider.url, api_key: FAKE_KEY },
    });
    try {
      const session = await t.brain.create({ harness: "claude-code" });
      const turn = await session.prompt("Look around CMD[hostname]");
      const settled = await turn.settled;
      expect(settled.error).toBeUndefined();
      expect(settled.status).toBe("completed");
      const [id] = sessionContainers(session.id);
      expect(docker("inspect", "-f", "{{.HostConfig.NetworkMode}}", id!)).toBe("none");
      expect(textOf(await events(session), turn.turn)).toContain("done");
      // The key reached the provider from the proxy, on this host; the CLI had only the proxy's token.
      expect(provider.requests.at(-1)?.headers["x-api-key"]).toBe(FAKE_KEY);
    } finally {
      await t.cleanup();
    }
  });

  it("refuses it, saying why and what to change, when the CLI would hold the key itself", async () => {
    const t = makeBrain({
      factories: [sandboxed(false)],
      provider: { base_url: provider.url, api_key: FAKE_KEY },
    });
    try {
      const session = await t.brain.create({ harness: "claude-code" });
      const settled = await (await session.prompt("hi")).settled;
      expect(settled.status).toBe("failed");
      expect(settled.error?.message).toMatch(
        /no network, and its provider http:\/\/[\d.]+:\d+ is not on this host's loopback; Brain's credential proxy could reach it from this host, but its credential_proxy setting is false/,
      );
      expect(sessionContainers(session.id)).toEqual([]);
    } finally {
      await t.cleanup();
    }
  });

  it("refuses it too when the CLI would hold the key for its vendor's own endpoint (no base_url)", async () => {
    const t = makeBrain({ factories: [sandboxed(false)], provider: { api: "anthropic", api_key: FAKE_KEY } });
    try {
      const session = await t.brain.create({ harness: "claude-code" });
      const settled = await (await session.prompt("hi")).settled;
      expect(settled.status).toBe("failed");
      expect(settled.error?.message).toMatch(
        /no network, and its provider \(no base_url: its vendor's own endpoint\) is not on this host's loopback; Brain's credential proxy could reach it from this host, but its credential_proxy setting is false/,
      );
      expect(sessionContainers(session.id)).toEqual([]);
    } finally {
      await t.cleanup();
    }
  });
});
