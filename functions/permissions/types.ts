import { z } from 'zod';

export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'] as const;
export const permissionModeSchema = z.enum(PERMISSION_MODES);
export type PermissionMode = z.output<typeof permissionModeSchema>;

/** Where a rule came from, strongest first: an organisation policy, the project, the session, one request. */
export const RULE_SOURCES = ['policy', 'project', 'session', 'request'] as const;
export type RuleSource = (typeof RULE_SOURCES)[number];
export type RuleBehavior = 'allow' | 'deny' | 'ask';

/** `Tool` or `Tool(content)`, parsed. */
export interface RuleValue {
  toolName: string;
  content?: string;
}

export interface PermissionRule {
  source: RuleSource;
  behavior: RuleBehavior;
  value: RuleValue;
}

/** Rules as settings and API bodies carry them: lists of rule strings per behavior. */
export const ruleListsSchema = z.strictObject({
  allow: z.array(z.string().min(1).max(500)).max(500).optional(),
  deny: z.array(z.string().min(1).max(500)).max(500).optional(),
  ask: z.array(z.string().min(1).max(500)).max(500).optional(),
});
export type RuleLists = z.output<typeof ruleListsSchema>;

/** Everything the permission decision needs, reloaded with the session each turn. */
export interface PermissionContext {
  mode: PermissionMode;
  rules: readonly PermissionRule[];
  /** Nobody is there to answer (cron, webhooks): `ask` becomes `deny`. */
  unattended: boolean;
}

/** A tool's own verdict from `checkPermissions`. */
export type PermissionCheck =
  | { behavior: 'passthrough' }
  | { behavior: 'allow'; updatedInput?: unknown }
  | { behavior: 'deny'; message: string }
  | { behavior: 'ask'; message?: string };

/**
 * One simple command of a shell command line, as rules see it (the Bash tool splits a command
 * into these: functions/tools/bash/command-parts.ts). A rule with content is matched against
 * each part, never against the line as a whole (docs/security.md, "Bash rules").
 */
export interface CommandPart {
  /** The part as written: what an "approval needed" message names. */
  text: string;
  /** What a deny message names: the whole command, or its pipeline stage when the command has pipes. */
  segment: string;
  /** Every form a deny or ask rule is tried against: as written, without assignments, wrappers or the program's folder, unquoted. */
  matchForms: string[];
  /** The one form an allow rule must cover (safe assignments and safe wrappers removed); absent when no rule can cover it. */
  allowForm?: string;
  /** Only reads, by itself: it needs no rule. */
  readOnly: boolean;
  /** Only matters to deny and ask rules (a command a shell wrapper would run); the part that holds it needs the allow. */
  denyOnly?: boolean;
  /** What it runs cannot be known before it runs (`$CMD x`, `eval "$X"`): no deny rule can be ruled out. */
  unknown?: boolean;
}

/** A command split for rule matching, or the reason it could not be. */
export type CommandParts =
  /** `compound`: more than one statement (a redirection is part of its command, not one of its own). */
  { parsed: true; parts: CommandPart[]; compound: boolean } | { parsed: false; reason: string };

/**
 * What a permission decision reads of a tool: the tools/ contract satisfies it, so permissions
 * stay below tools (tools ask permissions, never the other way round).
 */
export interface PermissionSubject<Ctx> {
  readonly name: string;
  /** Changes nothing but files in the workspace: `acceptEdits` lets it run without asking. */
  readonly editsFiles: boolean;
  isReadOnly(input: unknown): boolean;
  checkPermissions(input: unknown, ctx: Ctx): Promise<PermissionCheck>;
  /** A shell tool: its command split into parts, which content rules match one by one. */
  commandParts?(input: unknown): Promise<CommandParts | undefined>;
}

export type DecisionReason =
  | { type: 'rule'; rule: PermissionRule }
  | { type: 'tool' }
  | { type: 'hook'; hookName: string }
  | { type: 'mode'; mode: PermissionMode }
  | { type: 'user'; remember: boolean };

export type PermissionDecision =
  | { behavior: 'allow'; updatedInput?: unknown; reason: DecisionReason }
  | { behavior: 'deny'; message: string; reason: DecisionReason }
  | { behavior: 'ask'; message: string; reason: DecisionReason };
