// A registry on this host's loopback whose one image's pull stalls: the real Docker daemon pulls from it (it pulls
// from 127.0.0.0/8 over plain HTTP, and reaches loopback past the dead proxy docker-engine.sh gives it), and the
// image's layer is sent in part, the rest held until `release()` (or `holdMs`). So a `docker pull` or a `docker
// run` of the image is a real, slow pull, and it ends when the test says, with no registry reachable here.
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

export interface StalledRegistry {
  /** The image to pull: `127.0.0.1:PORT/NAME:TAG`. */
  image: string;
  /** Resolves once the daemon asked for the layer (the pull is under way, held). */
  layerAsked: Promise<void>;
  /** Whether the layer was sent whole: the pull could end. */
  layerSent(): boolean;
  /** Sends the rest of the layer to every pull held. */
  release(): void;
  close(): Promise<void>;
}

const digest = (data: Buffer) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

/** `holdMs`: how long the layer is held at most, so a pull nobody stopped still ends (a test's failure, not a hang). */
export async function stalledRegistry(name: string, holdMs: number): Promise<StalledRegistry> {
  // One empty tar: an image with nothing in it, which no container can run (it is never meant to run).
  const tar = Buffer.alloc(1024);
  const layer = gzipSync(tar);
  const config = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: {},
      rootfs: { type: "layers", diff_ids: [digest(tar)] },
    }),
  );
  const manifestType = "application/vnd.docker.distribution.manifest.v2+json";
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: manifestType,
      config: {
        mediaType: "application/vnd.docker.container.image.v1+json",
        size: config.length,
        digest: digest(config),
      },
      layers: [
        {
          mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip",
          size: layer.length,
          digest: digest(layer),
        },
      ],
    }),
  );
  let asked: () => void = () => {};
  const layerAsked = new Promise<void>((resolve) => {
    asked = resolve;
  });
  let sent = false;
  let released = false;
  const held = new Set<() => void>();
  const release = () => {
    released = true;
    for (const finish of held) finish();
    held.clear();
  };
  const holdTimer = setTimeout(release, holdMs);
  const server = createServer((req, res) => {
    const url = req.url ?? "";
    const send = (body: Buffer, headers: Record<string, string> = {}) => {
      res.writeHead(200, { "Content-Length": String(body.length), ...headers });
      res.end(req.method === "HEAD" ? undefined : body);
    };
    if (url === "/v2/") return send(Buffer.from("{}"), { "Docker-Distribution-API-Version": "registry/2.0" });
    if (url.includes("/manifests/"))
      return send(manifest, { "Content-Type": manifestType, "Docker-Content-Digest": digest(manifest) });
    if (url.endsWith(digest(config))) return send(config);
    if (url.endsWith(digest(layer))) {
      asked();
      res.writeHead(200, { "Content-Length": String(layer.length) });
      res.write(layer.subarray(0, 10));
      const finish = () => {
        sent = true;
        res.end(layer.subarray(10));
      };
      if (released) finish();
      else held.add(finish);
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    image: `127.0.0.1:${port}/${name}:held`,
    layerAsked,
    layerSent: () => sent,
    release,
    close: async () => {
      clearTimeout(holdTimer);
      held.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
