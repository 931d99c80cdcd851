import { COMMAND_HOOK_MAX_TIMEOUT_S, type CommandHookConfig } from '../hooks/command-hook.ts';
import { HOOK_EVENTS, type HookEvent } from '../hooks/types.ts';
import { rulesFromLists } from './rule-syntax.ts';
import type { RuleLists } from './types.ts';

/** Where a repository's settings live in its workspace; `.claude/settings.local.json` is never read (docs/context.md). */
export const REPOSITORY_SETTINGS_PATH = '/workspace/.claude/settings.json';

/**
 * What Stratus takes from a repository's `.claude/settings.json`: permission rules, command
 * hooks and variables for sandboxed commands. `notes` says, for the person running the session,
 * what was refused, ignored or could not be read; every other part of the file still applies.
 */
export interface RepositorySettings {
  rules: RuleLists;
  hooks: CommandHookConfig[];
  env: Record<string, string>;
  notes: string[];
}

export const NO_REPOSITORY_SETTINGS: RepositorySettings = { rules: {}, hooks: [], env: {}, notes: [] };

const MAX_HOOKS = 20;
/** A hostile file must not flood the event log: notes past these are summed up in one. */
const MAX_NOTES = 20;
const MAX_NOTE_CHARS = 500;
const MAX_ENV_VARS = 100;
const MAX_ENV_BYTES = 32 * 1024;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Set by the sandbox for every command; a repository's value would be overwritten, so it is refused up front. */
const SANDBOX_VARIABLES = new Set([
  'PATH',
  'HOME',
  'TMPDIR',
  'LANG',
  'USER',
  'SHELL',
  'TERM',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'http_proxy',
  'https_proxy',
  'CLAUDE_PROJECT_DIR',
]);

/**
 * Keys that would widen what the operator or tenant set (network, MCP servers, the model and its
 * spend, commands run on the API side): refused, whatever their value.
 */
const REFUSED_KEYS: Record<string, string> = {
  sandbox: 'network access and sandbox policy come from the session and the deployment, never from the repository',
  allowedDomains: "network access comes from the session's allowedDomains, never from the repository",
  mcpServers: "MCP servers come from the session's settings, never from the repository",
  enableAllProjectMcpServers: "MCP servers come from the session's settings, never from the repository",
  enabledMcpjsonServers: "MCP servers come from the session's settings, never from the repository",
  model: "the model (and what it costs) is the deployment's and the session's choice",
  apiKeyHelper: 'it would run a command outside the sandbox',
  awsAuthRefresh: 'it would run a command outside the sandbox',
  awsCredentialExport: 'it would run a command outside the sandbox',
  otelHeadersHelper: 'it would run a command outside the sandbox',
};
const REFUSED_PERMISSION_KEYS: Record<string, string> = {
  defaultMode: "the permission mode is the session's",
  additionalDirectories: 'commands and tools only ever see /workspace',
};

/** Parses the file's text; never throws: whatever is wrong becomes a note and the rest applies. */
export function parseRepositorySettings(text: string): RepositorySettings {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    return { ...NO_REPOSITORY_SETTINGS, notes: [`.claude/settings.json is not valid JSON (${(err as Error).message}); none of it applies.`] };
  }
  if (!isRecord(value)) return { ...NO_REPOSITORY_SETTINGS, notes: ['.claude/settings.json is not a JSON object; none of it applies.'] };
  const notes: string[] = [];
  for (const key of Object.keys(value)) {
    if (key === 'permissions' || key === 'hooks' || key === 'env' || key === '$schema') continue;
    notes.push(
      REFUSED_KEYS[key]
        ? `.claude/settings.json: "${key}" refused: ${REFUSED_KEYS[key]}.`
        : `.claude/settings.json: "${key}" is not applied in Stratus (only permissions, hooks and env are).`,
    );
  }
  const settings = { rules: permissionRules(value.permissions, notes), hooks: commandHooks(value.hooks, notes), env: commandEnv(value.env, notes) };
  return { ...settings, notes: cappedNotes(notes) };
}

function cappedNotes(notes: string[]): string[] {
  const shown = notes.slice(0, MAX_NOTES).map((note) => (note.length > MAX_NOTE_CHARS ? `${note.slice(0, MAX_NOTE_CHARS - 1)}…` : note));
  const more = notes.length - shown.length;
  return more > 0 ? [...shown, `.claude/settings.json: ${more} more note${more === 1 ? '' : 's'} not shown.`] : shown;
}

function permissionRules(value: unknown, notes: string[]): RuleLists {
  if (value === undefined) return {};
  if (!isRecord(value)) {
    notes.push('.claude/settings.json: "permissions" is not an object; no rules from it apply.');
    return {};
  }
  const lists: RuleLists = {};
  for (const [key, entry] of Object.entries(value)) {
    if (key === 'allow' || key === 'deny' || key === 'ask') {
      const strings = Array.isArray(entry) ? entry.filter((r): r is string => typeof r === 'string' && r.length > 0 && r.length <= 500) : [];
      const skipped = Array.isArray(entry) ? entry.length - strings.length : 1;
      if (skipped > 0)
        notes.push(
          `.claude/settings.json: ${skipped} entr${skipped === 1 ? 'y' : 'ies'} of "permissions.${key}" skipped: each rule is a string of at most 500 characters.`,
        );
      const { invalid } = rulesFromLists({ [key]: strings }, 'project');
      if (invalid.length > 0) notes.push(`.claude/settings.json: not a permission rule, skipped: ${invalid.map((r) => JSON.stringify(r)).join(', ')}.`);
      lists[key] = strings.filter((r) => !invalid.includes(r)).slice(0, 500);
    } else {
      notes.push(
        REFUSED_PERMISSION_KEYS[key]
          ? `.claude/settings.json: "permissions.${key}" refused: ${REFUSED_PERMISSION_KEYS[key]}.`
          : `.claude/settings.json: "permissions.${key}" is not applied in Stratus.`,
      );
    }
  }
  return lists;
}

/** `{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}`, flattened. */
function commandHooks(value: unknown, notes: string[]): CommandHookConfig[] {
  if (value === undefined) return [];
  if (!isRecord(value)) {
    notes.push('.claude/settings.json: "hooks" is not an object; no hooks from it run.');
    return [];
  }
  const hooks: CommandHookConfig[] = [];
  for (const [event, groups] of Object.entries(value)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      notes.push(`.claude/settings.json: "${event}" hooks do not run in Stratus (only ${HOOK_EVENTS.join(', ')}).`);
      continue;
    }
    for (const group of Array.isArray(groups) ? groups : [groups]) hooks.push(...hookGroup(event as HookEvent, group, notes));
  }
  if (hooks.length > MAX_HOOKS) notes.push(`.claude/settings.json: only the first ${MAX_HOOKS} of ${hooks.length} hooks run.`);
  return hooks.slice(0, MAX_HOOKS);
}

function hookGroup(event: HookEvent, group: unknown, notes: string[]): CommandHookConfig[] {
  const matcher = isRecord(group) && typeof group.matcher === 'string' ? group.matcher.slice(0, 500) : undefined;
  if (!isRecord(group) || !Array.isArray(group.hooks) || (group.matcher !== undefined && typeof group.matcher !== 'string')) {
    notes.push(`.claude/settings.json: a "${event}" entry is not {"matcher", "hooks": [...]}; skipped.`);
    return [];
  }
  const hooks: CommandHookConfig[] = [];
  for (const hook of group.hooks) {
    if (!isRecord(hook) || hook.type !== 'command') {
      notes.push(
        `.claude/settings.json: a "${event}" hook of type ${JSON.stringify(isRecord(hook) ? hook.type : hook)} refused: a repository's hooks may only be commands, which run in the sandbox.`,
      );
      continue;
    }
    const timeout = hook.timeout;
    if (
      typeof hook.command !== 'string' ||
      hook.command.trim() === '' ||
      hook.command.length > 10_000 ||
      (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0))
    ) {
      notes.push(
        `.claude/settings.json: a "${event}" command hook needs a "command" string (at most 10 000 characters) and an optional positive "timeout" in seconds; skipped.`,
      );
      continue;
    }
    if (typeof timeout === 'number' && timeout > COMMAND_HOOK_MAX_TIMEOUT_S)
      notes.push(`.claude/settings.json: a "${event}" hook's timeout is cut to ${COMMAND_HOOK_MAX_TIMEOUT_S} s.`);
    hooks.push({
      event,
      ...(matcher !== undefined ? { matcher } : {}),
      command: hook.command,
      ...(typeof timeout === 'number' ? { timeoutS: Math.min(timeout, COMMAND_HOOK_MAX_TIMEOUT_S) } : {}),
    });
  }
  return hooks;
}

function commandEnv(value: unknown, notes: string[]): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value)) {
    notes.push('.claude/settings.json: "env" is not an object of strings; no variables from it apply.');
    return {};
  }
  const env: Record<string, string> = {};
  let bytes = 0;
  for (const [name, raw] of Object.entries(value)) {
    const problem = envProblem(name, raw, Object.keys(env).length, bytes);
    if (problem) {
      notes.push(`.claude/settings.json: variable "${name.slice(0, 128)}" ${problem}; skipped.`);
      continue;
    }
    env[name] = String(raw);
    bytes += name.length + String(raw).length;
  }
  return env;
}

function envProblem(name: string, raw: unknown, count: number, bytes: number): string | undefined {
  if (!ENV_NAME.test(name)) return 'is not a variable name';
  if (SANDBOX_VARIABLES.has(name)) return 'is set by the sandbox';
  if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') return 'needs a string value';
  if (count >= MAX_ENV_VARS) return `is past the limit of ${MAX_ENV_VARS} variables`;
  if (bytes + name.length + String(raw).length > MAX_ENV_BYTES) return `is past the limit of ${MAX_ENV_BYTES / 1024} KiB of variables`;
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
