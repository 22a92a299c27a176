// The web UI: the static files in web/, served without auth (they hold no data; the page asks for the token).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { installRoot } from "../core/install-root.js";

/** web/ at the install root (from src/, dist/src/ or the CLI's bundle alike). */
export function webDir(): string {
  return join(installRoot(), "web");
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
};

// The UI needs only its own files, same-origin fetch and EventSource (default-src 'self'), and data: images (the
// transcript shows images inline). Nothing else may load, nothing may frame it, and no address leaks in a Referer.
export const UI_HEADERS = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  // For a browser that does not know frame-ancestors (CSP level 2).
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

// Every other answer (JSON, an error, a 404 that quotes its path, the event stream) is data, never a page: nothing
// in it may run or load, be framed, or be read as another type than it says. Nor be kept: a browser keeps an
// answer that does not say no-store, and gives it from its cache to any page of the origin, with no token, after
// sign-out too (a shared machine's next user).
export const DATA_HEADERS = {
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** A file of web/ by its bare name, or undefined. Names with anything but [a-z0-9._-] never reach the disk. */
export async function webFile(name: string, dir = webDir()): Promise<Response | undefined> {
  if (!/^[a-z0-9_-][a-z0-9._-]*$/i.test(name)) return undefined;
  const type = TYPES[name.split(".").pop() ?? ""];
  if (!type) return undefined;
  try {
    const body = await readFile(join(dir, name));
    return new Response(body, {
      headers: { ...UI_HEADERS, "content-type": type, "cache-control": "no-cache" },
    });
  } catch {
    return undefined;
  }
}
