// The CLI agent server (agent-server.ts) in its family image (docker/agent-server.Dockerfile, built by
// scripts/agent-images.sh from the local base image) behind the `docker` harness on a real engine: the real pi,
// Claude Code, Codex and opencode CLIs in --network none containers, reaching only the fake provider on this
// host's loopback (host_ports), the provider's URL and key arriving with the run, never in the image.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
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

// Claude Code, Codex and opencode ask before running a shell command; nobody answers HITL here (no NUI_API_URL),
// so the operator allows their tools (pi asks nothing).
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

async function agentSession(family: Family): Promise<Session> {
  const f = FAMILIES[family];
  const image = images[family]!;
  provider = await startFakeProvider();
  provider.setFallback(shellAgent({ slowDelayMs: 100 }));
  const port = Number(new URL(provider.url).port);
  t = makeBrain({ factories: [new DockerFactory("docker", undefined, { interruptGraceMs: 5_000 })] });
  return t.brain.create({
    harness: "docker",
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
          ...f.env,
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
