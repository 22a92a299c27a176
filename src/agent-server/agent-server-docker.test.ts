// The CLI agent server (agent-server.ts) in its family image (docker/agent-server.Dockerfile, built by
// scripts/agent-images.sh from the local base image) behind the `docker` harness on a real engine: the real pi
// and Claude Code CLIs in --network none containers, reaching only the fake provider on this host's loopback
// (host_ports), the provider's URL and key arriving with the run, never in the image.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../core/session.js";
import { DockerFactory } from "../harnesses/http/docker.js";
import { installMounts } from "../harnesses/sandbox/docker-sandbox.js";
import { events, makeBrain, type TestBrain, textOf, waitForEvent } from "../testing/brain.js";
import { FAKE_KEY } from "../testing/cli.js";
import { docker, ensureDockerEngine, sessionContainers } from "../testing/docker-engine.js";
import { type FakeProvider, shellAgent, startFakeProvider } from "../testing/fake-provider/index.js";
import { root } from "../testing/nui.js";
import { AGENT_PORT, PROVIDER_ENV } from "./agent-server.js";

/** What differs between the families run here: the provider's path, the shell tool, how the key is sent. */
const FAMILIES = {
  "pi-cli": { path: "/v1", shell: "bash", key: ["authorization", `Bearer ${FAKE_KEY}`], env: {} },
  // Claude Code asks before Bash; nobody answers HITL here (no NUI_API_URL), so the operator allows its tools.
  "claude-code": {
    path: "",
    shell: "Bash",
    key: ["x-api-key", FAKE_KEY],
    env: { BRAIN_AGENT_TOOLS: "allow" },
  },
} as const;
type Family = keyof typeof FAMILIES;

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
        docker_args: installMounts(root).flatMap((dir) => ["-v", `${dir}:${dir}:ro`]),
        env: {
          [PROVIDER_ENV.base_url]: `http://127.0.0.1:${port}${f.path}`,
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
      expect(call?.data).toMatchObject({ name: f.shell, arguments: { command: "ls -1" } });
      const result = all.find((e) => e.type === "tool.result" && e.turn === turn.turn);
      expect(result?.data).toMatchObject({
        id: (call?.data as { id: string } | undefined)?.id,
        is_error: false,
      });
      expect(textOf(all, turn.turn)).toBe("Let me look.done");
      const [header, value] = f.key;
      expect(provider!.requests[0]?.headers[header]).toBe(value);
      // The next turn continues the same CLI session: the agent named it in `done`, Brain sent it back.
      const next = await s.prompt("NOTOOL again");
      expect(await next.settled).toMatchObject({ status: "completed" });
      const carrying = provider!.requests.filter((r) => JSON.stringify(r.body).includes("NOTOOL again"));
      expect(carrying.length).toBeGreaterThan(0);
      for (const r of carrying) expect(JSON.stringify(r.body)).toContain("List the files here");
      const [id] = sessionContainers(s.id);
      expect(docker("inspect", "-f", "{{.HostConfig.NetworkMode}}", id!)).toBe("none");
      expect(docker("image", "inspect", "-f", "{{json .Config.Env}}", images[family]!)).not.toContain(
        FAKE_KEY,
      );
      await t!.brain.closeSession(s.id);
      expect(sessionContainers(s.id)).toEqual([]);
    });

    it("a cancel mid-run settles interrupted, and the next turn runs in the same container", async () => {
      const s = await agentSession(family);
      const turn = await s.prompt("SLOW NOTOOL count");
      await waitForEvent(s, (e) => e.type === "assistant.delta" && e.turn === turn.turn);
      await s.interrupt();
      expect((await turn.settled).status).toBe("interrupted");
      const next = await s.prompt("NOTOOL hello");
      expect(await next.settled).toMatchObject({ status: "completed" });
      expect(textOf(await events(s), next.turn)).toBe("hello from fake");
      expect(sessionContainers(s.id)).toHaveLength(1);
    });
  },
);
