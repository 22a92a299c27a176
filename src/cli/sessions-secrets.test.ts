// `brain sessions ls --json | show | events` print a session as the daemon's views show it: a credential its
// record holds written out (an MCP server's header or env, an agent's env) is redacted in every output.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsSessionStore } from "../store/fs/index.js";
import { useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("cli-secrets");
const SECRET = "ghp-literal-in-the-record-0123456789";

describe("a session whose record holds credentials written out", () => {
  it("is printed redacted by sessions ls --json, show and events", async () => {
    const store = new FsSessionStore(cli.home);
    const { id } = await store.create({
      harness: "echo",
      config: { options: { env: { GH_TOKEN: `${SECRET}-env` } } },
      mcp_servers: {
        gh: { url: "https://mcp.example/", headers: { Authorization: `Bearer ${SECRET}` } },
        db: { command: "db-mcp", env: { DB_PASSWORD: `${SECRET}-db` } },
      },
    });
    const log = await store.openLog(id);
    // A line from before the session knew its secrets (a log written by an older Brain, or by hand).
    await log.append([{ type: "harness.warning", data: { message: `header was Bearer ${SECRET}` } }]);
    await log.close();

    for (const args of [
      ["ls", "--json"],
      ["show", id],
      ["events", id],
    ]) {
      const { code, out, err } = cli.run(["sessions", ...args]);
      expect(code, err).toBe(0);
      expect(out).toContain(id);
      expect(out, args.join(" ")).not.toContain(SECRET);
    }
    const shown = JSON.parse(cli.run(["sessions", "show", id]).out);
    expect(shown.mcp_servers).toEqual({
      gh: { url: "https://mcp.example/", headers: { Authorization: "[redacted:Authorization]" } },
      db: { command: "db-mcp", env: { DB_PASSWORD: "[redacted:DB_PASSWORD]" } },
    });
    expect(shown.config.options.env).toEqual({ GH_TOKEN: "[redacted:GH_TOKEN]" });
  });
});

describe("an agent definition that holds credentials written out", () => {
  it("is printed redacted by agents show, as the sessions made from it are", () => {
    mkdirSync(join(cli.home, "agents"), { recursive: true });
    writeFileSync(
      join(cli.home, "agents", "deploy.yaml"),
      [
        'adl: "1.0"',
        "name: deploy",
        "harness:",
        "  type: echo",
        "  env:",
        `    GH_TOKEN: ${SECRET}-env`,
        `    DATABASE_URL: postgres://app:${SECRET}-db@db/app`,
        "aiAssets:",
        "  mcpServers:",
        "    - name: gh",
        "      url: https://mcp.example/",
        "      headers:",
        `        Authorization: Bearer ${SECRET}-mcp`,
      ].join("\n"),
    );
    const { code, out, err } = cli.run(["agents", "show", "deploy"]);
    expect(code, err).toBe(0);
    const shown = JSON.parse(out);
    expect(shown.session.config.options.env.GH_TOKEN).toBe("[redacted:GH_TOKEN]");
    expect(out).not.toContain(SECRET);
  });
});
