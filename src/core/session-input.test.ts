import { describe, expect, it } from "vitest";
import { BrainError } from "./errors.js";
import { LiveSessions } from "./live-sessions.js";
import type { Session } from "./session.js";
import { resolveSessionInput } from "./session-input.js";

const harnesses = ["echo", "api"];

describe("one resolution of session input", () => {
  it("lays the call over the agent over the defaults, config key by key", () => {
    const input = resolveSessionInput(
      {
        defaults: { model: "d", system_prompt: "ds", tools: ["a"], provider: "p1", mcp_servers: {} },
        agent: { harness: "api", config: { model: "agent" }, permissions: { default: "ask" } },
        call: { config: { tools: ["b"] }, id: "s1", tenant: "t" },
      },
      harnesses,
    );
    expect(input).toEqual({
      harness: "api",
      config: { model: "agent", system_prompt: "ds", tools: ["b"] },
      provider: "p1",
      permissions: { default: "ask" },
      mcp_servers: {},
      id: "s1",
      tenant: "t",
    });
  });

  it("keeps the defaults' MCP servers out of the session config", () => {
    const servers = { fs: { command: "mcp-fs" } };
    const input = resolveSessionInput({ defaults: { mcp_servers: servers, model: "m" } }, harnesses);
    expect(input).toEqual({ harness: "echo", config: { model: "m" }, mcp_servers: servers });
  });

  it("falls back to echo, and names the field when the harness is unknown or missing", () => {
    expect(resolveSessionInput({}, harnesses).harness).toBe("echo");
    const unknown = () => resolveSessionInput({ call: { harness: "nope" } }, harnesses);
    expect(unknown).toThrow('field "harness": unknown harness "nope"; known harnesses: echo, api');
    const configured = () => resolveSessionInput({ defaults: { harness: "nope" } }, harnesses);
    expect(configured).toThrow(/unknown harness "nope" \(set by the config's defaults\.harness\); known/);
    expect(() => resolveSessionInput({}, ["api"])).toThrow(
      expect.objectContaining({ code: "bad_request", field: "harness" }),
    );
  });

  it("takes inline provider settings without a grant (the operator's CLI), names only with one", () => {
    const inline = { api: "openai-chat", base_url: "http://127.0.0.1:1" };
    expect(resolveSessionInput({ call: { provider: inline } }, harnesses).provider).toEqual(inline);
    const grant = { allowed: ["p1"], restricted: true, listedAt: "GET /v1/providers" };
    expect(() => resolveSessionInput({ call: { provider: inline }, grant }, harnesses)).toThrow(BrainError);
    expect(() => resolveSessionInput({ call: { provider: "p2" }, grant }, harnesses)).toThrow(
      'field "provider": unknown or not allowed provider "p2"; this token may use: p1 (GET /v1/providers)',
    );
    expect(resolveSessionInput({ defaults: { provider: "p1" }, grant }, harnesses).provider).toBe("p1");
    expect(() => resolveSessionInput({ defaults: { provider: "p2" }, grant }, harnesses)).toThrow(
      /required for this token/,
    );
    // No default at all: a restricted token's session would have no provider, and could reach the host's keys.
    expect(() => resolveSessionInput({ grant }, harnesses)).toThrow(
      'field "provider": required for this token (this host has no default provider); name one in "provider"; this token may use: p1 (GET /v1/providers)',
    );
    const open = { ...grant, restricted: false };
    expect(resolveSessionInput({ defaults: { provider: "p2" }, grant: open }, harnesses).provider).toBe("p2");
    expect(resolveSessionInput({ grant: open }, harnesses).provider).toBeUndefined();
  });
});

describe("a new session's permission policy", () => {
  const deny = { tools: { echo: "deny" } } as const;
  const grant = { allowed: [], restricted: false, listedAt: "GET /v1/providers" };

  it("is the operator's own choice on its CLI (no grant): the call's replaces the agent's and the defaults'", () => {
    const input = resolveSessionInput(
      {
        defaults: { permissions: deny },
        agent: { permissions: deny },
        call: { permissions: { default: "allow" } },
      },
      harnesses,
    );
    expect(input.permissions).toEqual({ default: "allow" });
    expect(input.client_permissions).toBeUndefined();
  });

  it("keeps a network caller's beside the operator's, the agent's or else the defaults'", () => {
    const client = { default: "allow" } as const;
    const agent = { tools: { "*": "ask" } } as const;
    const viaAgent = resolveSessionInput(
      {
        defaults: { permissions: deny },
        agent: { permissions: agent },
        call: { permissions: client },
        grant,
      },
      harnesses,
    );
    expect(viaAgent).toMatchObject({ permissions: agent, client_permissions: client });
    const viaDefaults = resolveSessionInput(
      { defaults: { permissions: deny }, call: { permissions: {} }, grant },
      harnesses,
    );
    expect(viaDefaults).toMatchObject({ permissions: deny, client_permissions: {} });
    // Nothing of the operator's: Brain's own defaults are what the client tightens.
    const alone = resolveSessionInput({ call: { permissions: client }, grant }, harnesses);
    expect(alone.permissions).toBeUndefined();
    expect(alone.client_permissions).toEqual(client);
    const none = resolveSessionInput({ defaults: { permissions: deny }, grant }, harnesses);
    expect(none).not.toHaveProperty("client_permissions");
    expect(none.permissions).toEqual(deny);
  });

  it("keeps a handoff's carried client policy beside the operator's, with or without a grant", () => {
    const layers = { agent: { permissions: deny }, call: { permissions: { default: "ask" as const } } };
    for (const limits of [{}, { grant }]) {
      const input = resolveSessionInput({ ...layers, ...limits, callPermissionsTighten: true }, harnesses);
      expect(input).toMatchObject({ permissions: deny, client_permissions: { default: "ask" } });
    }
  });
});

describe("the registry of live sessions", () => {
  const fake = (id: string) => ({ id, log: {} }) as unknown as Session;

  it("opens each id once, and tells its subscribers what opened", async () => {
    const live = new LiveSessions();
    const seen: string[] = [];
    live.subscribe((change) =>
      seen.push(`${change.type} ${"session" in change ? change.session.id : change.id}`),
    );
    let opens = 0;
    const make = async () => {
      opens += 1;
      return { session: fake("s1"), tenant: "t" };
    };
    const [a, b] = await Promise.all([live.get("s1", make), live.get("s1", make)]);
    expect(a).toBe(b);
    expect(opens).toBe(1);
    expect(live.find("s1")).toEqual({ session: a, tenant: "t" });
    expect(seen).toEqual(["opened s1"]);
    await live.take("s1");
    expect(live.find("s1")).toBeUndefined();
  });

  it("forgets a session that failed to open, so the next ask tries again", async () => {
    const live = new LiveSessions();
    await expect(live.get("s1", async () => Promise.reject(new Error("broken")))).rejects.toThrow("broken");
    expect(await live.get("s1", async () => ({ session: fake("s1") }))).toMatchObject({ id: "s1" });
  });

  it("lets a network caller set only the options its harness offers clients, merged over the agent's", () => {
    const grant = { allowed: [], restricted: false, listedAt: "GET /v1/providers" };
    const clientOptions = (name: string) =>
      ({ echo: { clientOptions: "any" as const }, api: { clientOptions: ["temperature"] } })[name];
    const agent = { harness: "api", config: { options: { image: "operator:1", temperature: 1 } } };
    const call = { config: { options: { temperature: 0.2 } } };
    const input = resolveSessionInput({ agent, call, grant }, harnesses, clientOptions);
    expect(input.config?.options).toEqual({ image: "operator:1", temperature: 0.2 });
    const image = { config: { options: { image: "evil", temperature: 0 } } };
    expect(() => resolveSessionInput({ agent, call: image, grant }, harnesses, clientOptions)).toThrow(
      expect.objectContaining({ code: "bad_request", field: "config.options.image" }),
    );
    // The operator's own CLI has no grant: it may set anything.
    expect(resolveSessionInput({ agent, call: image }, harnesses, clientOptions).config?.options).toEqual({
      image: "evil",
      temperature: 0,
    });
    const runner = { harness: "echo", config: { options: { delay_ms: 5 } } };
    expect(resolveSessionInput({ call: runner, grant }, harnesses, clientOptions).config?.options).toEqual({
      delay_ms: 5,
    });
  });

  it("lets a network caller isolate tools further, never undo an operator's bound mode", () => {
    const grant = { allowed: [], restricted: false, listedAt: "GET /v1/providers" };
    const agent = { harness: "echo", config: { tool_mode: "bound" as const } };
    const native = { config: { tool_mode: "native" as const } };
    expect(() => resolveSessionInput({ agent, call: native, grant }, harnesses)).toThrow(
      expect.objectContaining({ code: "bad_request", field: "config.tool_mode" }),
    );
    expect(resolveSessionInput({ agent, call: native }, harnesses).config?.tool_mode).toBe("native");
    const bound = { config: { tool_mode: "bound" as const } };
    expect(resolveSessionInput({ call: bound, grant }, harnesses).config?.tool_mode).toBe("bound");
    expect(resolveSessionInput({ agent, grant }, harnesses).config?.tool_mode).toBe("bound");
  });
});
