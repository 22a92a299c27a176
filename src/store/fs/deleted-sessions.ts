// The embedded store's tombstones of keyed deletes (src/core/deleted-sessions.ts): <home>/deleted/<tenant>.json,
// one file per tenant (named by a digest of the tenant), replaced whole on each keyed delete (a temp file synced
// and renamed over it: a crash leaves the old list or the new one, never half of one).

import { randomUUID } from "node:crypto";
import fsp from "node:fs/promises";
import nodePath from "node:path";
import { type DeletedSessions, kept, type Tombstone, tenantSlot } from "../../core/deleted-sessions.js";
import { OneAtATime } from "../../core/one-at-a-time.js";
import { disk } from "./errors.js";

export class FsDeletedSessions implements DeletedSessions {
  private readonly dir: string;
  /** Per-tenant chain of this process's writes: two deletes at once both land in the list. */
  private readonly writes = new OneAtATime();

  constructor(home: string) {
    this.dir = nodePath.join(home, "deleted");
  }

  async list(tenant: string): Promise<Tombstone[]> {
    return kept(await this.read(this.file(tenant)), Date.now());
  }

  async add(tenant: string, tombstone: Tombstone): Promise<void> {
    const file = this.file(tenant);
    await this.writes.run(tenant, async () => {
      const list = kept(await this.read(file), Date.now(), tombstone);
      await disk("create", this.dir, () => fsp.mkdir(this.dir, { recursive: true, mode: 0o700 }));
      const tmp = `${file}.${randomUUID()}.tmp`;
      await disk("write", tmp, async () => {
        const handle = await fsp.open(tmp, "wx", 0o600);
        try {
          await handle.writeFile(`${JSON.stringify(list)}\n`);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await fsp.rename(tmp, file);
      }).catch(async (err) => {
        await fsp.rm(tmp, { force: true });
        throw err;
      });
    });
  }

  private file(tenant: string): string {
    return nodePath.join(this.dir, `${tenantSlot(tenant)}.json`);
  }

  /** The stored list, or none: a missing file, or one that is not JSON (a damaged list only forgets deletes). */
  private async read(file: string): Promise<unknown> {
    const text = await disk("read", file, () => fsp.readFile(file, "utf8").catch(missing));
    try {
      return text === undefined ? [] : JSON.parse(text);
    } catch {
      return [];
    }
  }
}

function missing(err: NodeJS.ErrnoException): undefined {
  if (err.code === "ENOENT") return undefined;
  throw err;
}
