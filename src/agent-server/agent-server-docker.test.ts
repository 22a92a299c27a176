// The CLI agent server (agent-server.ts) in its family image (docker/agent-server.Dockerfile, built by
// scripts/agent-images.sh from the local base image) behind the `docker` harness on a real engine: the real pi,
// Claude Code, Codex and opencode CLIs in --network none containers, reaching only the fake provider on this
// host's loopback (host_ports) and their session's own HITL API (NUI_API_URL), the provider's URL and key
// arriving with the run, never in the image; the CLI's state in the session's native dir, mounted, so
// checkpoints and forks carry it.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Session } from "../core/session.js";
import { claudeCodeCase } from "../harnesses/claude-code/testing/case.js";
import { codexCase } from "../harnesses/codex/testing/case.js";
import { DockerFactory } from "../harnesses/http/docker.js";
import { opencodeCase } from "../harnesses/opencode/testing/case.js";
import { piCliCase } from "../harnesses/pi-cli/testing/case.js";
import { events, makeBrain, type TestBrain, textOf, waitForEvent } from "../testing/brain.js";
import { agentRequests, FAKE_KEY } from "../testing/cli.js";
import { docker, ensureDockerEngine, sessionContainers } from "../testing/docker-engine.js";
import { type FakeProvider, shellAgent, startFakeProvider } from "../testing/fake-provider/index.js";
import { root } from "../testing/nui.js";
import { AGENT_PORT, PROVIDER_ENV } from "./agent-server.js";

// Claude Code, Codex and opencode ask before running a shell command; in the family checks the operator allows
// their tools (pi asks nothing); the HITL tests below leave them to Brain's clients.
const ALLOW = { BRAIN_AGENT_TOOLS: "allow" };
/**
 * What differs between the families: each family's shared test case (provider path, shell call, key header,
 * whether its text is exact), and what its container needs from the operator.
 */
const FAMILIES = {
  "pi-cli": { case: piCliCase, env: {}, dockerArgs: [] },
  "claude-code": { case: claudeCodeCase, env: ALLOW, dockerArgs: [] },
  // Codex confines each command in its own sandbox (bubblewrap), which Docker's default seccomp profile forbids.
  codex: { case: codexCase, env: ALLOW, dockerArgs: ["--security-opt", "seccomp=unconfined"] },
  opencode: { case: opencodeCase, env: ALLOW, dockerArgs: [] },
} as const;
type Family = keyof typeof FAMILIES;

// opencode's 185 MB binary can take tens of seconds to start on a loaded machine.
vi.setConfig({ testTimeout: 400_000 });

const images: Record<string, string> = {};
beforeAll(async () => {
  await ensureDockerEngine();
  const { stdout } = await promisify(execFile)(
    "bash",
    [`${root}/scripts/agent-images.sh`, ...Object.keys(FAMILIES)],
    { cwd: root, timeout: 600_000 },
  );
  const tags = stdout.trim().split("\n");
  Object.keys(FAMILIES).forEach((family, i) => {
    images[family] = tags[i] ?? "";
  });
}, 600_000);

let t: TestBrain | undefined;
let provider: FakeProvider | undefined;
afterEach(async () => {
  await t?.cleanup();
  await provider?.close();
  t = provider = undefined;
});

/**
 * A session of `family`'s image behind `docker` (a Brain and a fake provider made on first use). `hitl`: no
 * BRAIN_AGENT_TOOLS, so each permission goes to Brain's clients; `permissions`: the session's policy.
 */
async function agentSession(
  family: Family,
  opts: { hitl?: boolean; permissions?: Record<string, unknown> } = {},
): Promise<Session> {
  const f = FAMILIES[family];
  const image = images[family]!;
  if (!provider) {
    provider = await startFakeProvider();
    provider.setFallback(shellAgent({ slowDelayMs: 100 }));
  }
  const port = Number(new URL(provider.url).port);
  t ??= makeBrain({ factories: [new DockerFactory("docker", undefined, { interruptGraceMs: 5_000 })] });
  const { BRAIN_AGENT_TOOLS: _tools, ...hitlEnv } = f.env as Record<string, string>;
  return t.brain.create({
    harness: "docker",
    ...(opts.permissions ? { permissions: opts.permissions } : {}),
    config: {
      model: "fake-model",
      options: {
        image,
        containerPort: AGENT_PORT,
        network: "none",
        host_ports: [port],
        // Nothing of this host's install is mounted: the image carries Brain's build and the pinned CLI.
        docker_args: [...f.dockerArgs],
        env: {
          [PROVIDER_ENV.base_url]: `http://127.0.0.1:${port}${f.case.provider?.path ?? ""}`,
          [PROVIDER_ENV.api_key]: FAKE_KEY,
          ...(opts.hitl ? hitlEnv : f.env),
        },
      },
    },
  });
}

describe.each(Object.keys(FAMILIES) as Family[])(
  "the %s agent server in its image, behind docker",
  (family) => {
    it("runs a shell tool call and its result, then text; the key reached the provider; no key in the image", async () => {
      const f = FAMILIES[family];
      const s = await agentSession(family);
      const turn = await s.prompt("List the files here");
      expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
      const all = await events(s);
      const call = all.find((e) => e.type === "tool.call" && e.turn === turn.turn);
      expect(call?.data).toMatchObject(f.case.shellCall);
      expect(JSON.stringify(call?.data)).toContain("ls -1");
      const result = all.find((e) => e.type === "tool.result" && e.turn === turn.turn);
      expect(result?.data).toMatchObject({
        id: (call?.data as { id: string } | undefined)?.id,
        is_error: false,
      });
      if (f.case.exactText === false) expect(textOf(all, turn.turn)).toContain("done");
      else expect(textOf(all, turn.turn)).toBe("Let me look.done");
      if (f.case.keyHeader) {
        const [header, value] = f.case.keyHeader;
        expect(agentRequests(provider!.requests)[0]?.headers[header]).toBe(value);
      }
      // The next turn continues the same CLI session: the agent named it in `done`, Brain sent it back.
      const next = await s.prompt("NOTOOL again");
      expect(await next.settled).toMatchObject({ status: "completed" });
      const carrying = agentRequests(provider!.requests).filter((r) =>
        JSON.stringify(r.body).includes("NOTOOL again"),
      );
      expect(carrying.length).toBeGreaterThan(0);
      for (const r of carrying) expect(JSON.stringify(r.body)).toContain("List the files here");
      const [id] = sessionContainers(s.id);
      expect(docker("inspect", "-f", "{{.HostConfig.NetworkMode}}", id!)).toBe("none");
      expect(docker("image", "inspect", "-f", "{{json .Config.Env}}", images[family]!)).not.toContain(
        FAKE_KEY,
      );
      await t!.brain.closeSession(s.id);
      expect(sessionContainers(s.id)).toEqual([]);
      // The image carries the CLI this install pins (nothing of the host's install was mounted).
      const pkg = `node_modules/${f.case.npmPackage}/package.json`;
      const carried = docker("run", "--rm", "--network", "none", images[family]!, "cat", `/opt/brain/${pkg}`);
      expect(JSON.parse(carried).version).toBe(JSON.parse(readFileSync(join(root, pkg), "utf8")).version);
    });

    it("a cancel mid-run settles interrupted, and the next turn runs in the same container", async () => {
      const s = await agentSession(family);
      const turn = await s.prompt("SLOW NOTOOL count");
      await waitForEvent(s, (e) => e.type === "assistant.delta" && e.turn === turn.turn);
      await s.interrupt();
      expect((await turn.settled).status).toBe("interrupted");
      const next = await s.prompt("NOTOOL hello");
      expect(await next.settled).toMatchObject({ status: "completed" });
      expect(textOf(await events(s), next.turn)).toContain("hello from fake");
      expect(sessionContainers(s.id)).toHaveLength(1);
    });
  },
);

/** The value of `name` in a container's environment (Docker's record of it). */
function containerEnv(id: string, name: string): string {
  const all = JSON.parse(docker("inspect", "-f", "{{json .Config.Env}}", id)) as string[];
  return all.find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1) ?? "";
}

/** Answers the permission request `turn` raises, after checking what it asks. */
async function answer(s: Session, turn: string, decision: "allow" | "deny", command: string) {
  const asked = await waitForEvent(s, (e) => e.type === "permission.requested" && e.turn === turn);
  expect(asked.data).toMatchObject({ tool: "Bash", arguments: { command } });
  await s.answer({
    type: "permission.resolved",
    data: { id: (asked.data as { id: string }).id, decision },
  });
}

/** Files the agent's CLI made in its working dir (<native>/agent/<its session>/work, mounted from here). */
function made(s: Session): string[] {
  const agent = join(t!.store.paths(s.id).native, "agent");
  return readdirSync(agent).flatMap((id) => {
    const work = join(agent, id, "work");
    return existsSync(work) ? readdirSync(work) : [];
  });
}

// Claude Code runs a read-only command such as `ls` without asking; `touch` it asks for.
describe("HITL from the CLI inside the container", () => {
  it("Claude Code's permission requests reach Brain's client, which allows one turn's and denies the next's", async () => {
    const s = await agentSession("claude-code", { hitl: true });
    const first = await s.prompt("Make it CMD[touch allowed-file]");
    await answer(s, first.turn, "allow", "touch allowed-file");
    expect(await first.settled).toMatchObject({ status: "completed" });
    let all = await events(s);
    expect(all.find((e) => e.type === "tool.result" && e.turn === first.turn)?.data).toMatchObject({
      is_error: false,
    });
    expect(textOf(all, first.turn)).toBe("Let me look.done");
    expect(made(s)).toEqual(["allowed-file"]);

    const second = await s.prompt("Now CMD[touch denied-file]");
    await answer(s, second.turn, "deny", "touch denied-file");
    expect(await second.settled).toMatchObject({ status: "completed" });
    all = await events(s);
    expect(all.find((e) => e.type === "tool.result" && e.turn === second.turn)?.data).toMatchObject({
      is_error: true,
    });
    expect(made(s)).toEqual(["allowed-file"]);

    // The container's NUI_API_URL is its session's own, with a secret in it that is nowhere else.
    const [id] = sessionContainers(s.id);
    const url = containerEnv(id!, "NUI_API_URL");
    const secret = new URL(url).pathname.split("/")[1] ?? "";
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(JSON.stringify(all)).not.toContain(secret);
    expect(docker("logs", id!)).not.toContain(secret);
    const manifest = await s.checkpoint();
    expect(manifest.files.some((f) => f.path.endsWith(".jsonl"))).toBe(true); // Claude's transcript
    for (const file of manifest.files) {
      const text = readFileSync(join(t!.store.paths(s.id).native, file.path), "utf8");
      expect(text).not.toContain(secret);
    }
    expect(docker("image", "inspect", "-f", "{{json .Config.Env}}", images["claude-code"]!)).not.toContain(
      "NUI_API_URL",
    );
  });

  it("nobody answering is a deny: a headless session (ask_timeout_ms 0) refuses the tool", async () => {
    const s = await agentSession("claude-code", { hitl: true, permissions: { ask_timeout_ms: 0 } });
    const turn = await s.prompt("Make it CMD[touch headless-file]");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    const result = (await events(s)).find((e) => e.type === "tool.result" && e.turn === turn.turn);
    expect(result?.data).toMatchObject({ is_error: true });
    expect(made(s)).toEqual([]);
  });
});

/** Where each family keeps its conversation, among the checkpoint's files under the agent's dir. */
const STATE_FILES: Record<"pi-cli" | "claude-code", RegExp> = {
  "pi-cli": /^agent\//,
  // Claude Code's transcript, in the folder its config dir names after the CLI's cwd.
  "claude-code": /^agent\/[^/]+\/claude\/projects\/[^/]+\/[^/]+\.jsonl$/,
};

describe.each(Object.keys(STATE_FILES) as (keyof typeof STATE_FILES)[])(
  "%s's state in the session's native dir",
  (family) => {
    it("a checkpoint after a turn takes the CLI's session, a fork into a fresh dir resumes it, and a fork without it is refused", async () => {
      const s = await agentSession(family);
      const first = await s.prompt("NOTOOL remember the word zebra");
      expect(await first.settled).toMatchObject({ status: "completed" });
      const manifest = await s.checkpoint();
      const paths = manifest.files.map((f) => f.path);
      expect(paths).toContain("nui-session.json");
      expect(paths.filter((p) => STATE_FILES[family].test(p)).length).toBeGreaterThan(0);

      const fork = await t!.brain.fork(s.id);
      const next = await fork.prompt("NOTOOL which word?");
      expect(await next.settled).toMatchObject({ status: "completed" });
      const carrying = agentRequests(provider!.requests).filter((r) =>
        JSON.stringify(r.body).includes("which word?"),
      );
      expect(carrying.length).toBeGreaterThan(0);
      for (const r of carrying) expect(JSON.stringify(r.body)).toContain("remember the word zebra");
      // Its own container, on its own native dir.
      const [id] = sessionContainers(fork.id);
      expect(docker("inspect", "-f", "{{range .Mounts}}{{.Source}}>{{.Destination}} {{end}}", id!)).toContain(
        `${t!.store.paths(fork.id).native}>/brain/native`,
      );

      // Verified resume goes through the agent: a fork whose CLI session is gone fails before the model is
      // asked. (A session opens its harness at its first prompt: the files go before that.)
      const lost = await t!.brain.fork(s.id);
      rmSync(join(t!.store.paths(lost.id).native, "agent"), { recursive: true, force: true });
      const asked = provider!.requests.length;
      const failed = await lost.prompt("NOTOOL still there?");
      const settled = await failed.settled;
      expect(settled.status).toBe("failed");
      expect(settled.error?.message).toMatch(/Brain will not start the model without its history/);
      expect(provider!.requests.length).toBe(asked);
    });
  },
);
