// Cluster mode's settings: --nats URLs and brain.config.json's `cluster` block, checked before anything starts;
// credentials in a NATS URL are never printed.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../core/free-port.js";
import { root, useBrainCli } from "../testing/brain-cli.js";
import { startNatsCluster } from "../testing/nats-cluster.js";
import { leaseTtl, natsServers } from "./cluster.js";
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

  // Read with Number(): "abc" was dropped without a word (the config's or the default TTL used instead), and "100"
  // or "-5" taken as a lease TTL the config file's lease_ttl_ms (500 or more) refuses.
  it("refuses a BRAIN_LEASE_TTL_MS that is no whole number of milliseconds, 500 or more, naming it", () => {
    expect(leaseTtl("5000", 9000)).toBe(5000);
    expect(leaseTtl(undefined, 9000)).toBe(9000);
    expect(leaseTtl("", undefined)).toBeUndefined();
    for (const bad of ["abc", "100", "-5", "1.5e3"]) {
      expect(() => leaseTtl(bad, 9000)).toThrow(
        `BRAIN_LEASE_TTL_MS takes the lease TTL in milliseconds (a whole number, 500 or more), not "${bad}"`,
      );
    }
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

describe("--no-auth in cluster mode", () => {
  const cli = useBrainCli("cluster-no-auth");
  /** This machine's own address off loopback: nothing leaves it, whatever is tried. */
  const own = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === "IPv4")?.address;

  it.skipIf(own === undefined)("is refused with NATS off loopback, before connecting to it", async () => {
    const nats = `nats://${own}:${await freePort()}`;
    const refused = cli.run(["serve", "--port", "0", "--no-auth", "--nats", `nats://127.0.0.1:1,${nats}`]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(
      `--no-auth is only allowed with NATS on a loopback address, not ${nats}: without tokens, anyone who can publish on that NATS could drive every session`,
    );
  });
});

describe("credentials in a NATS URL", () => {
  const cli = useBrainCli("cluster-secret");
  const withSecret = (server: string) => server.replace("nats://", "nats://brain:pw-s3cret%40x@");

  it("are not in the error when NATS cannot be reached, nor when a URL is refused", async () => {
    const nats = withSecret(`nats://127.0.0.1:${await freePort()}`);
    const down = cli.run(["serve", "--port", "0", "--no-auth", "--nats", nats]);
    expect(down.code).toBe(2);
    expect(down.err).toMatch(/cannot reach NATS at nats:\/\/\*\*\*@127\.0\.0\.1:\d+: /);
    expect(down.err).not.toContain("s3cret");
    expect(() => natsServers("http://tok3n-s3cret@a:4222")).toThrow(/"http:\/\/\*\*\*@a:4222" is not a nats/);
  });

  it("are not in the error when a comma or space in them splits the list", () => {
    // The list is split on commas and spaces before each URL is read: a password holding one was cut in two,
    // and the error quoted the first piece, "nats://brain:pw-s3", whole.
    for (const value of [
      "nats://brain:pw-s3,cret@a:4222",
      "nats://brain:pw-s3 cret@a:4222",
      "nats://b:4222,nats://tok3n s3cret x@a:4222",
    ]) {
      let message = "";
      try {
        natsServers(value);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, value).toMatch(/percent-encode/);
      expect(message, value).not.toMatch(/s3|cret|tok3n/);
    }
  });

  it("are not in the line brain serve starts with", async () => {
    const cluster = await startNatsCluster();
    const child = spawn(
      process.execPath,
      [
        join(root, "bin/brain.js"),
        "serve",
        "--port",
        "0",
        "--no-auth",
        "--nats",
        cluster.servers.map(withSecret).join(","),
      ],
      { env: { ...process.env, BRAIN_HOME: cli.home }, stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      let out = "";
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          const started = /^brain daemon on .*$/m.exec(out)?.[0];
          if (started) resolve(started);
        });
        child.stderr.on("data", (d: Buffer) => {
          out += d.toString();
        });
        child.once("exit", (code) => reject(new Error(`brain serve exited (${code}): ${out}`)));
      });
      expect(line).toContain(
        `NATS ${cluster.servers.map((s) => s.replace("nats://", "nats://***@")).join(",")}, node`,
      );
      expect(out).not.toContain("s3cret");
    } finally {
      child.kill("SIGTERM");
      if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
      await cluster.stop();
    }
  }, 120_000);
});
