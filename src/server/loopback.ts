// Which host names are this machine's loopback (a module of its own, so clients need not load the server).

/** 127.0.0.0/8, ::1 and localhost; an IPv6 literal may come bracketed, as URL.hostname gives it. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d+\.\d+\.\d+$/.test(bare);
}
