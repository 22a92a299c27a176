// What of Brain's environment an image can take into its dev container. The Dev Container CLI expands
// `${localEnv:NAME}` in the image's devcontainer.metadata label (containerEnv, remoteEnv…) from its own
// environment, and the image is anyone's: of Brain's variables the CLI is given only those that locate Docker and
// its daemon. Real Dev Container CLI, real Docker.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { HarnessFactory } from "../../core/harness.js";
import { quietHarness, tempDir } from "../../testing/brain.js";
import {
  devcontainerCliOffline,
  docker,
  ensureDockerEngine,
  imageWithMetadata,
  sessionContainers,
} from "../../testing/docker-engine.js";
import { devcontainerShim, installDir } from "../nui/install-paths.js";
import { BASE_IMAGE } from "../sandbox/docker-sandbox.js";
import { DevcontainerFactory } from "./factory.js";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 600_000 });

// Secrets a host commonly holds under docker's prefix: a CI's registry login, docker's own registry credentials.
const SECRETS = {
  DOCKER_PASSWORD: "registry-password-of-brains-host",
  DOCKER_AUTH_CONFIG: '{"auths":{"registry.example":{"auth":"c2VjcmV0"}}}',
};
const tag = `brain-test/devc-local-env-${process.pid}`;
/** The Dev Container CLI's reference to its own environment's `name`, as a label writes it. */
const localEnv = (name: string) => `\${localEnv:${name}}`;

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
  imageWithMetadata(tag, [
    {
      containerEnv: { TAKEN: localEnv("DOCKER_PASSWORD"), ALSO: localEnv("DOCKER_AUTH_CONFIG") },
    },
  ]);
});
afterAll(() => {
  docker("rmi", "-f", tag);
});
beforeEach(() => {
  devcontainerCliOffline();
  Object.assign(process.env, SECRETS);
});
afterEach(() => {
  for (const name of Object.keys(SECRETS)) delete process.env[name];
});

describe("an image whose label asks for Brain's variables", () => {
  it("gets none of Brain's docker secrets into its container's environment", async () => {
    let seen: string | undefined;
    // Inside: what the container's environment is, as `docker inspect` shows it to anyone with Docker.
    const inner = (_name: string, launcher: string[]): HarnessFactory => ({
      name: "probe",
      supportsSteering: false,
      open: async () => {
        const container = launcher[launcher.indexOf("--container") + 1]!;
        seen = docker("inspect", "-f", "{{json .Config.Env}}", container);
        return quietHarness();
      },
    });
    const factory = new DevcontainerFactory({
      inner,
      innerNames: () => ["probe"],
      needsProvider: () => false,
      shim: { node: process.execPath, script: devcontainerShim() },
      installDir: installDir(),
    });
    const native = join(tempDir("brain-devc-local-env-"), "native");
    mkdirSync(native);
    const harness = await factory.open({
      sessionId: `s-local-env-${process.pid}`,
      dir: native,
      provider: {},
      config: { options: { innerHarness: "probe", image: tag } },
    } as never);
    await harness.close();
    expect(sessionContainers(`s-local-env-${process.pid}`)).toEqual([]);
    for (const value of Object.values(SECRETS))
      expect(seen).not.toContain(JSON.stringify(value).slice(1, -1));
    // The label's references were expanded (to nothing), not left out.
    expect(seen).toMatch(/"TAKEN="/);
  });
});
