// Which methods a path takes, read from the routes the app registered (Hono's own list of them, matched with one
// of Hono's own routers), for the 405 a method the path does not take gets (RFC 9110 §15.5.6).
import { TrieRouter } from "hono/router/trie-router";
import { tryDecodeURIComponent } from "hono/utils/url";

/** A route as Hono lists it (app.routes); "ALL" is middleware (app.use), which takes no method of its own. */
interface Registered {
  method: string;
  path: string;
}

export interface PathMethods {
  /** The methods the path takes, for the Allow header: HEAD beside GET, as Hono answers HEAD with the GET route. */
  allow: string[];
  /** The path's parameters, decoded as c.req.param() decodes them (nui's {token}, for the caller's check). */
  params: Record<string, string>;
  /** Whether one of the routes the path matched is one `guarded` named: its caller is checked first. */
  guarded: boolean;
}

/**
 * `routes`: app.routes once every route is added. `guarded(path)`: whether a route's path (Hono's syntax) is one
 * only a caller with a token may learn anything about.
 */
export function methodsByPath(
  routes: readonly Registered[],
  guarded: (path: string) => boolean,
): (path: string) => PathMethods | undefined {
  const router = new TrieRouter<Registered>();
  for (const route of routes) if (route.method !== "ALL") router.add("ALL", route.path, route);
  return (path) => {
    const [matched] = router.match("ALL", path) as unknown as [[Registered, Record<string, string>][]];
    if (matched.length === 0) return undefined;
    const methods = new Set<string>();
    const params: Record<string, string> = {};
    for (const [route, raw] of matched) {
      methods.add(route.method);
      if (route.method === "GET") methods.add("HEAD");
      for (const [name, value] of Object.entries(raw)) params[name] ??= tryDecodeURIComponent(value);
    }
    return {
      allow: [...methods].sort(),
      params,
      guarded: matched.some(([route]) => guarded(route.path)),
    };
  };
}
