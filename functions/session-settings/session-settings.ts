import { z } from 'zod';
import { allowListSchema } from '../../sandbox-runner/common/network-allow-list.ts';
import { createHttpHook, httpHookConfigSchema, MAX_HOOK_ANSWER_BYTES } from '../hooks/http-hook.ts';
import { createOutboundFetch } from '../outbound/outbound-fetch.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import { customAgentsSchema } from './custom-agents.ts';
import { mcpServersSchema, toolSearchModeSchema } from './mcp-config.ts';
import { setupSettingsSchema } from './setup-settings.ts';
import type { HookDefinition } from '../hooks/types.ts';
import { UserError } from '../shared/errors.ts';
import { rulesFromLists } from '../permissions/rule-syntax.ts';
import {
  permissionModeSchema,
  ruleListsSchema,
  type PermissionContext,
  type PermissionMode,
  type PermissionRule,
  type RuleLists,
} from '../permissions/types.ts';

/** The longest a question may wait: a week. */
export const QUESTION_TIMEOUT_MAX_SECONDS = 7 * 24 * 3600;

/** How long a question waits in a session a person follows, unless its settings say otherwise: a day. */
export const DEFAULT_QUESTION_TIMEOUT_SECONDS = 24 * 3600;

/** How long the session's questions wait for an answer (ms); 0 where no one can answer. */
export function questionTimeoutMs(settings: SessionSettings | undefined, mode: PermissionMode): number {
  if (settings?.questionTimeoutSeconds !== undefined) return settings.questionTimeoutSeconds * 1000;
  if (settings?.unattended === true || mode === 'dontAsk') return 0;
  return DEFAULT_QUESTION_TIMEOUT_SECONDS * 1000;
}

/** Permission and hook settings a session is created with (and keeps; remembered answers add rules). */
export const sessionSettingsSchema = z.strictObject({
  permissionMode: permissionModeSchema.optional(),
  /** Project-level rules (e.g. from the repository's settings), then the session's own. */
  projectRules: ruleListsSchema.optional(),
  rules: ruleListsSchema.optional(),
  hooks: z.array(httpHookConfigSchema).max(20).optional(),
  /** Nobody will answer (cron, webhooks): `ask` becomes `deny`. */
  unattended: z.boolean().optional(),
  /**
   * Hosts commands may reach over HTTP(S) (e.g. "registry.npmjs.org", "*.github.com",
   * "pypi.internal.example:8443"); no network otherwise. The runner's own rules, so what passes
   * here is what the runner enforces (sandbox-runner/common/network-allow-list.ts).
   */
  allowedDomains: allowListSchema.optional(),
  /**
   * Remote MCP servers, in the shape of Claude Code's `.mcp.json`: `{"name": {"type": "http" | "sse",
   * "url", "headers"}}`. They are called from the API side under its outbound policy
   * (functions/outbound), not through the sandbox: their hosts need no `allowedDomains` entry.
   * Header values are never shown.
   */
  mcpServers: mcpServersSchema.optional(),
  /** `standard`, `tst` or `tst-auto` (functions/tools/tool-search); the deployment's default when absent. */
  toolSearch: toolSearchModeSchema.optional(),
  /** Custom sub-agents for the Agent tool (functions/session-settings/custom-agents.ts). */
  agents: customAgentsSchema.optional(),
  /** Set-up steps run before the first turn (functions/session-settings/setup-settings.ts, docs/environments.md). */
  setup: setupSettingsSchema.optional(),
  /**
   * How long a question of the agent (AskUserQuestion) waits for an answer before the turn goes
   * on without one; 0: never wait. Absent: a day, or 0 in an unattended or `dontAsk` session.
   */
  questionTimeoutSeconds: z.number().int().min(0).max(QUESTION_TIMEOUT_MAX_SECONDS).optional(),
  /**
   * The agent must present a plan first: the session starts in plan mode (unless it names another
   * mode) and its plans (ExitPlanMode) wait for a person's approval even when it is unattended (a
   * GitHub run of a repository set to "plan first", approved by a writer's reply comment).
   */
  planFirst: z.boolean().optional(),
});
export type SessionSettings = z.output<typeof sessionSettingsSchema>;

/** Per-turn overrides: a mode for this turn and rules for this request only. */
export const turnSettingsSchema = z.strictObject({
  permissionMode: permissionModeSchema.optional(),
  rules: ruleListsSchema.optional(),
});
export type TurnSettings = z.output<typeof turnSettingsSchema>;

/** Rejects malformed rule strings up front (a 400 naming them) rather than ignoring them. */
export function assertValidRules(lists: RuleLists | undefined, field: string): void {
  const { invalid } = rulesFromLists(lists, 'session');
  if (invalid.length > 0)
    throw new UserError(
      `Invalid "${field}": not a permission rule: ${invalid.map((r) => JSON.stringify(r)).join(', ')}. Use "Tool", "Tool(content)", "Bash(prefix:*)" or "mcp__server__*".`,
    );
}

/**
 * The permission context of one turn: policy, project (the session's projectRules, then the
 * repository's `.claude/settings.json`), session and request rules, in that order. The order only
 * names a rule's source: whichever source a rule comes from, deny beats ask beats allow (decide.ts).
 */
export function permissionContextFor(
  settings: SessionSettings | undefined,
  opts: { defaultMode: PermissionMode; policy?: RuleLists; turn?: TurnSettings; repository?: RuleLists },
): PermissionContext {
  const rules: PermissionRule[] = [
    ...rulesFromLists(opts.policy, 'policy').rules,
    ...rulesFromLists(settings?.projectRules, 'project').rules,
    ...rulesFromLists(opts.repository, 'project').rules,
    ...rulesFromLists(settings?.rules, 'session').rules,
    ...rulesFromLists(opts.turn?.rules, 'request').rules,
  ];
  return {
    mode: opts.turn?.permissionMode ?? settings?.permissionMode ?? (settings?.planFirst ? 'plan' : opts.defaultMode),
    rules,
    unattended: settings?.unattended === true,
  };
}

/** The session's HTTP hooks, each calling out through the outbound policy. */
export function hooksFor(settings: SessionSettings | undefined, outbound: OutboundPolicy): HookDefinition[] {
  if (!settings?.hooks?.length) return [];
  const fetch = createOutboundFetch(outbound, { maxResponseBytes: MAX_HOOK_ANSWER_BYTES });
  return settings.hooks.map((config) => createHttpHook(config, { fetch }));
}

/** The settings with one more session allow rule (a remembered "allow"). */
export function withRememberedRule(settings: SessionSettings | undefined, rule: string): SessionSettings {
  const current = settings ?? {};
  const allow = current.rules?.allow ?? [];
  if (allow.includes(rule)) return current;
  return { ...current, rules: { ...current.rules, allow: [...allow, rule] } };
}

/** What "remember" stores: Bash remembers the exact command; other tools the whole tool. */
export function ruleToRemember(toolName: string, input: unknown): string {
  const command = (input as { command?: unknown } | null)?.command;
  if (toolName === 'Bash' && typeof command === 'string') return `Bash(${command})`;
  return toolName;
}
