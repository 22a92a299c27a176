// A network: "none" dev container and a harness inside that needs a model provider but was given no way to one
// (no base_url, no key for Brain's credential proxy): refused before anything starts, naming the fixes, instead of
// failing late inside. A harness that calls no provider (the echo runner) runs all the same. On the fake CLIs.
import { describe, expect, it } from "vitest";
import type { BrainConfig } from "../../protocol/config.js";
import type { ProviderCredentials } from "../../protocol/runner.js";
import { readCalls, useFakeDocker } from "../../testing/nui.js";

const scratch = useFakeDocker();

/** How a session of `innerHarness` ends its first turn, and whether `devcontainer up` ran. */
async function firstTurn(
  innerHarness: string,
  provider: ProviderCredentials,
  harnesses?: BrainConfig["harnesses"],
) {
  const home = scratch.scratch("brain-devc-home-");
  const t = scratch.brain({ factories: scratch.devcontainers(home, harnesses), home, provider });
  const session = await t.brain.create({ harness: "devcontainer", config: { options: { innerHarness } } });
  const settled = await (await session.prompt("x")).settled;
  return { settled, up: readCalls(scratch.fake.state, "devcontainer-calls.jsonl").length > 0 };
}

const refusal = (what: string) =>
  new RegExp(
    `^harness "devcontainer" with network: "none" runs with no network, and its provider has no base_url and no api_key: nothing inside could reach a model \\(${what}\\); point the provider's base_url at a loopback proxy or model server \\(http://127\\.0\\.0\\.1:PORT\\), give the provider an api_key for Brain's credential proxy to use, or set network: "bridge"`,
  );

describe('a network: "none" dev container with no way to a provider', () => {
  it("refuses a CLI that needs one and has no key and no base_url, before devcontainer up", async () => {
    const { settled, up } = await firstTurn("claude-code", {});
    expect(settled.status).toBe("failed");
    expect(settled.error?.message).toMatch(
      refusal("the provider has no api_key, so the CLI talks to it itself"),
    );
    expect(up).toBe(false);
  });

  it("refuses a runner of the config, which may need one, naming how it says it needs none", async () => {
    // The echo runner under another name, saying nothing of a provider: Brain cannot tell it needs none.
    const { needs_provider: _, ...runner } = scratch.echoInside();
    const { settled, up } = await firstTurn("mine", {}, { mine: runner });
    expect(settled.status).toBe("failed");
    expect(settled.error?.message).toMatch(
      refusal(
        "mine talks to its provider itself \\(a runner that calls none says so with needs_provider: false in its harnesses entry\\)",
      ),
    );
    expect(up).toBe(false);
    // Said so, it runs.
    const said = await firstTurn("mine", {}, { mine: { ...runner, needs_provider: false } });
    expect(said.settled.error?.message).toBeUndefined();
    expect(said.settled.status).toBe("completed");
  });

  it("refuses the pi runner given a key but no base_url: its vendor's endpoint is off this host", async () => {
    const { settled, up } = await firstTurn("pi", { api: "anthropic", api_key: "sk-test" });
    expect(settled.error?.message).toMatch(
      /its provider \(no base_url: its vendor's own endpoint\) is not on this host's loopback; Brain's credential proxy could reach it from this host, but pi talks to its provider itself/,
    );
    expect(up).toBe(false);
  });

  it("runs the echo runner, which calls no provider, with none at all", async () => {
    const { settled, up } = await firstTurn("echo", {});
    expect(settled.error?.message).toBeUndefined();
    expect(settled.status).toBe("completed");
    expect(up).toBe(true);
  });
});
