import path from "node:path";

/**
 * Why `p` is not an acceptable native file path (relative, normalized, "/"-separated, inside the native dir),
 * or undefined when it is. Pure string rules: symlinks are checked against the disk elsewhere.
 */
export function pathProblem(p: string): string | undefined {
  if (p.length === 0) return "the path is empty; give the file's path relative to the native dir";
  if (p.includes("\0")) return "the path contains a NUL byte; give a plain relative path";
  if (path.posix.isAbsolute(p) || path.win32.isAbsolute(p)) {
    return 'the path is absolute; give it relative to the native dir (e.g. "session/log.jsonl")';
  }
  // Backslashes are legal in POSIX names but would turn into separators when restored on Windows.
  if (p.includes("\\")) return 'the path contains a backslash; use "/" as the separator';
  const parts = p.split("/");
  if (parts.includes(".."))
    return 'the path has a ".." segment; native files must stay inside the native dir';
  if (parts.some((s) => s === "" || s === ".")) {
    return `the path is not normalized; write it as ${JSON.stringify(path.posix.normalize(p).replace(/\/$/, ""))}`;
  }
  return undefined;
}

/** True when `child` (a realpath) is `root` (a realpath) or lies below it. */
export function isInside(root: string, child: string): boolean {
  if (child === root) return true;
  const rel = path.relative(root, child);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}
