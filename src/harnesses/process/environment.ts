// Seed A: a runner gets only these variables from Brain's environment, plus NO_COLOR=1 and what its harness
// entry adds. Provider credentials never travel here: only in the `open` frame.
export const PASSED_VARIABLES = [
  "PATH",
  "SystemRoot",
  "WINDIR",
  "COMSPEC",
  "PATHEXT",
  "TMP",
  "TEMP",
  "TMPDIR",
  "LANG",
  "LC_ALL",
] as const;

export function minimalEnvironment(
  from: NodeJS.ProcessEnv,
  additions: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_VARIABLES) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  env.NO_COLOR = "1";
  return { ...env, ...additions };
}
