// The web UI: the static files in web/, served without auth (they hold no data; the page asks for the token).
import { readFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** web/ at the project root, whether this runs compiled (dist/src/server) or from source (src/server). */
export const WEB_DIR = resolve(here, here.includes(`${sep}dist${sep}`) ? "../../../web" : "../../web");

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
};

/** A file of web/ by its bare name, or undefined. Names with anything but [a-z0-9._-] never reach the disk. */
export async function webFile(name: string, dir = WEB_DIR): Promise<Response | undefined> {
  if (!/^[a-z0-9_-][a-z0-9._-]*$/i.test(name)) return undefined;
  const type = TYPES[name.split(".").pop() ?? ""];
  if (!type) return undefined;
  try {
    const body = await readFile(join(dir, name));
    return new Response(body, { headers: { "content-type": type, "cache-control": "no-cache" } });
  } catch {
    return undefined;
  }
}
