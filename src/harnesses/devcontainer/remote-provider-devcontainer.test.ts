// claude-code in a `network: "none"` dev container with a provider that is not on this host's loopback: the
// container has no network, but the CLI reaches its provider through Brain's credential proxy, bridged in, and the
// proxy reaches the provider from this host; so the turn completes, and the key is nowhere the container holds
// (its environment, its own files, the directories mounted into it). When no proxy can be bridged in (Brain not
// root, the proxy off, an inner harness that talks to its provider itself) the session is refused before any
// container starts, saying why and what to change. The "remote" provider is the fake one on another of this
// host's own addresses: remote by address, and no test reaches the internet.
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { BrainConfig } from "../../protocol/config.js";
import type { ProviderCredentials } from "../../protocol/runner.js";
import { events, makeBrain, type TestBrain, tempDir, textOf } from "../../testing/brain.js";
import { FAKE_KEY } from "../../testing/cli.js";
import { docker, ensureDockerEngine, sessionContainers } from "../../testing/docker-engine.js";
import { type FakeProvider, shellAgent, startFakeProvider } from "../../testing/fake-provider/index.js";
import { catalogFactories } from "../../testing/nui.js";
import { locateCli } from "../cli/locate.js";
import { PROXY_VARIABLE } from "../cli/proxy-variable.js";
import { echoRunnerPath } from "../process/descriptor.js";
import { BASE_IMAGE } from "../sandbox/docker-sandbox.js";
import { DevcontainerFactory, type DevcontainerSettings } from "./factory.js";

vi.setConfig({ testTimeout: 400_000, hookTimeout: 600_000 });

/** One of this host's IPv4 addresses that is not loopback (a NIC's, or Docker's bridge gateway). */
const address = Object.values(networkInterfaces())
  .flat()
  .find((one) => one && one.family === "IPv4" && !one.internal)?.address;

let provider: FakeProvider;
let t: TestBrain | undefined;

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
  provider = await startFakeProvider({ host: address!, apiKey: FAKE_KEY });
  provider.setFallback(shellAgent());
});

afterAll(async () => {
  await provider?.close();
});

// `devcontainer up` first fetches a control manifest from the Dev Containers site; a fresh copy in its cache (trusted
// for five minutes by its mtime) keeps the test off the network.
beforeEach(() => {
  const dir = join(tmpdir(), `devcontainercli-${userInfo().username}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "control-manifest.json");
  writeFileSync(file, JSON.stringify({ disallowedFeatures: [], featureAdvisories: [] }));
  utimesSync(file, new Date(), new Date());
});

afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** A Brain with the catalog's devcontainer harness (as Brain's user `uid`, when given) and the remote provider. */
function brain(host: { uid?: number; cli?: BrainConfig["cli"]; provider?: ProviderCredentials } = {}) {
  const home = tempDir("brain-devc-remote-");
  const { factories } = catalogFactories({
    brainHome: home,
    ...(host.cli ? { cli: host.cli } : {}),
    harnesses: { echo: { command: [process.execPath, echoRunnerPath()] } },
  });
  const found = factories.find((f) => f.name === "devcontainer")!;
  const settings = (found as unknown as { settings: DevcontainerSettings }).settings;
  t = makeBrain({
    home,
    factories: [host.uid === undefined ? found : new DevcontainerFactory({ ...settings, uid: host.uid })],
    provider: host.provider ?? { base_url: provider.url, api_key: FAKE_KEY },
  });
  return t.brain;
}

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return entry.isFile() ? [path] : [];
  });
}

/** What of the container could hold the key: its environment, the files it wrote, its writable mounts'. */
function holdingKey(id: string): string[] {
  const env = docker("inspect", "-f", "{{json .Config.Env}}", id);
  const mounts = JSON.parse(docker("inspect", "-f", "{{json .Mounts}}", id)) as {
    Source: string;
    RW: boolean;
  }[];
  const written = docker("diff", id)
    .split("\n")
    .filter((line) => /^[AC] /.test(line))
    .map((line) => line.slice(2));
  const inLayer = written.filter((path) =>
    docker("exec", id, "sh", "-c", `test -f "$1" && grep -c "$2" "$1" || true`, "-", path, FAKE_KEY)
      .split("\n")
      .some((count) => Number(count) > 0),
  );
  const inMounts = mounts
    .filter((mount) => mount.RW)
    .flatMap((mount) => filesUnder(mount.Source))
    .filter((file) => statSync(file).size < 64 * 1024 * 1024 && readFileSync(file).includes(FAKE_KEY));
  return [...(env.includes(FAKE_KEY) ? ["Config.Env"] : []), ...inLayer, ...inMounts];
}

describe.runIf(address && locateCli("claude") && locateCli("devcontainer"))(
  'a network: "none" dev container with a provider off this host\'s loopback',
  () => {
    it("runs claude-code inside through the credential proxy, the key never in the container", async () => {
      expect(provider.url).not.toContain("127.0.0.1");
      const session = await brain().create({
        harness: "devcontainer",
        config: { options: { innerHarness: "claude-code", image: BASE_IMAGE } },
      });
      const turn = await session.prompt("Show me your environment CMD[env; ip -o link]");
      const settled = await turn.settled;
      expect(settled.error).toBeUndefined();
      expect(settled.status).toBe("completed");
      const [id] = sessionContainers(session.id);
      expect(docker("inspect", "-f", "{{.HostConfig.NetworkMode}}", id!)).toBe("none");
      const all = await events(session);
      expect(textOf(all, turn.turn)).toContain("done");
      const output = JSON.stringify(all.filter((e) => e.type === "tool.result"));
      // The CLI had the proxy on the container's own loopback, and no interface but that.
      expect(output).toMatch(new RegExp(`${PROXY_VARIABLE}=http://127\\.0\\.0\\.1:\\d+/`));
      expect(output).not.toMatch(/eth0/);
      expect(output).not.toContain(FAKE_KEY);
      expect(output, "the agent's shell printed the provider's key").not.toContain("[redacted:provider_key]");
      expect(holdingKey(id!)).toEqual([]);
      // The key reached the provider from the proxy, on this host.
      expect(provider.requests.at(-1)?.headers["x-api-key"]).toBe(FAKE_KEY);
      await t!.brain.closeSession(session.id);
      expect(sessionContainers(session.id)).toEqual([]);
    });

    it("refuses it before any container starts, saying why, when no proxy can be bridged in", async () => {
      const refused = async (b: ReturnType<typeof brain>, innerHarness: string, remoteUser?: string) => {
        const session = await b.create({
          harness: "devcontainer",
          config: { options: { innerHarness, image: BASE_IMAGE, ...(remoteUser ? { remoteUser } : {}) } },
        });
        const settled = await (await session.prompt("hi")).settled;
        expect(settled.status).toBe("failed");
        expect(sessionContainers(session.id)).toEqual([]);
        await t?.cleanup();
        t = undefined;
        return settled.error?.message ?? "";
      };
      const refusal = (why: string) =>
        new RegExp(
          `harness "devcontainer" with network: "none" runs its CLI with no network, and its provider http://[\\d.]+:\\d+ is not on this host's loopback; Brain's credential proxy could reach it from this host, but ${why}.* or set network: "bridge"`,
        );
      expect(await refused(brain({ uid: 1000 }), "claude-code")).toMatch(
        refusal("Brain runs as uid 1000, not root, and cannot enter the container's network namespace"),
      );
      expect(
        await refused(brain({ cli: { "claude-code": { credential_proxy: false } } }), "claude-code"),
      ).toMatch(refusal("its credential_proxy setting is false"));
      expect(await refused(brain(), "echo")).toMatch(refusal("echo talks to its provider itself"));
      // With no base_url the CLI would take the key to its vendor's own endpoint, which it cannot reach either.
      const vendors = brain({ uid: 1000, provider: { api: "anthropic", api_key: FAKE_KEY } });
      expect(await refused(vendors, "claude-code", "node")).toMatch(
        /its provider \(no base_url: its vendor's own endpoint\) is not on this host's loopback; Brain's credential proxy could reach it from this host, but Brain runs as uid 1000, not root/,
      );
    });
  },
);
