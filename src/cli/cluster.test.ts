// Cluster mode's settings: --nats URLs and brain.config.json's `cluster` block, checked before anything starts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { natsServers } from "./cluster.js";
import { loadConfig } from "./config.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function configFile(value: unknown): string {
  dir = mkdtempSync(join(tmpdir(), "brain-cluster-config-"));
  const file = join(dir, "brain.config.json");
  writeFileSync(file, JSON.stringify(value));
  return file;
}

describe("cluster settings", () => {
  it("splits --nats on commas and spaces and refuses what is not a nats:// URL", () => {
    expect(natsServers("nats://a:4222, nats://b:4222 nats://c:4222")).toEqual([
      "nats://a:4222",
      "nats://b:4222",
      "nats://c:4222",
    ]);
    expect(() => natsServers("http://a:4222")).toThrow(/not a nats:\/\/ URL; write it as nats:\/\/HOST:PORT/);
    expect(() => natsServers(" , ")).toThrow(/at least one server URL/);
  });

  it("takes a cluster block in brain.config.json and names a bad field", () => {
    const good = { cluster: { nats: ["nats://127.0.0.1:4222"], node: "a", lease_ttl_ms: 5000 } };
    expect(loadConfig(configFile(good)).config.cluster).toEqual(good.cluster);
    expect(() => loadConfig(configFile({ cluster: { nats: ["127.0.0.1:4222"] } }))).toThrow(
      /field "cluster.nats.0": a nats:\/\/HOST:PORT URL/,
    );
    expect(() => loadConfig(configFile({ cluster: { nats: [], nodes: 3 } }))).toThrow(/cluster/);
  });
});
