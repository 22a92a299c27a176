// Brain's permission policy for Claude Code's own tools (`native` tool mode), shared by the claude-code family
// and the ACP preset acp:claude. Claude Code asks (can_use_tool, session/request_permission) only about tools it
// does not consider safe: read-only ones (Read, Glob, Grep, …) in its cwd run without a word. So the policy is
// also given up front: denied tools are disallowed, tools it would ask about go on the settings' `ask` list (so
// every use is asked), and a policy that does not allow tools by default limits the built-ins to the ones named
// here, so a tool Brain does not know of cannot run unasked either.
import { randomUUID } from "node:crypto";

type Decide = (tool: string) => "allow" | "ask" | "deny";

/**
 * Claude Code's built-in tools (2.1.197's default set, from the tools it offers the model, and the names it has
 * had in other releases). A name it does not have is ignored by `--tools` and `--disallowedTools`.
 */
export const CLAUDE_TOOLS: readonly string[] = [
  "Agent",
  "AskUserQuestion",
  "Bash",
  "BashOutput",
  "CronCreate",
  "CronDelete",
  "CronList",
  "DesignSync",
  "Edit",
  "EnterPlanMode",
  "EnterWorktree",
  "ExitPlanMode",
  "ExitWorktree",
  "Glob",
  "Grep",
  "KillShell",
  "LS",
  "ListAgents",
  "ListMcpResourcesTool",
  "Monitor",
  "MultiEdit",
  "NotebookEdit",
  "NotebookRead",
  "ReadMcpResourceDirTool",
  "ReadMcpResourceTool",
  "Read",
  "ReportFindings",
  "ScheduleWakeup",
  "SendMessage",
  "Skill",
  "Task",
  "TaskCreate",
  "TaskGet",
  "TaskList",
  "TaskOutput",
  "TaskStop",
  "TaskUpdate",
  "TodoWrite",
  "WebFetch",
  "WebSearch",
  "Workflow",
  "Write",
];

export interface ClaudeToolRules {
  /** The built-ins Claude Code may offer at all (`--tools`); undefined: its own default set. */
  tools?: string[];
  /** `--disallowedTools`: the ones the policy denies. */
  disallowed: string[];
  /** Settings' `permissions.ask`: the ones the policy would ask about, asked at every use. */
  ask: string[];
}

/** The policy's word on each built-in; undefined when there is no policy (then Claude's own defaults hold). */
export function claudeToolRules(policy: Decide | undefined): ClaudeToolRules | undefined {
  if (!policy) return undefined;
  const of = (decision: string) => CLAUDE_TOOLS.filter((tool) => policy(tool) === decision);
  const disallowed = of("deny");
  // A name no rule can mean on purpose: what the policy says of a tool it does not name.
  const unlisted = policy(`brain-unlisted-${randomUUID()}`);
  const tools = unlisted === "allow" ? undefined : CLAUDE_TOOLS.filter((tool) => !disallowed.includes(tool));
  return { ...(tools ? { tools } : {}), disallowed, ask: of("ask") };
}

/** The `claude` command-line arguments for the rules. */
export function claudeToolArgs(rules: ClaudeToolRules | undefined): string[] {
  if (!rules) return [];
  const args: string[] = [];
  if (rules.tools) args.push("--tools", rules.tools.join(","));
  if (rules.disallowed.length > 0) args.push("--disallowedTools", rules.disallowed.join(","));
  if (rules.ask.length > 0) args.push("--settings", askSettings(rules.ask));
  return args;
}

/** Settings JSON that makes Claude Code ask before every use of `tools`. */
export function askSettings(tools: string[]): string {
  return JSON.stringify({ permissions: { ask: tools } });
}
