import { createCommandHook, type SandboxedHookRun } from '../hooks/command-hook.ts';
import { NO_REPOSITORY_SETTINGS, parseRepositorySettings, REPOSITORY_SETTINGS_PATH, type RepositorySettings } from '../permissions/repository-settings.ts';
import { WorkspaceInputError } from '../runner-client/runner-errors.ts';
import type { WorkspaceSession } from '../runner-client/workspace-session.ts';
import { errorMessage } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { RepositoryControls } from './agent-driver.ts';

/**
 * Reads the repository's `.claude/settings.json` from the workspace version a run starts on,
 * through the runner (the harness never sees the workspace's files otherwise), and never fails the
 * run: a missing file is no settings, an unreadable or malformed one a note and no settings.
 */
export async function readRepositorySettings(workspace: WorkspaceSession, log: Logger): Promise<RepositorySettings> {
  // Version 0 was never seeded, imported or written: no file to read, so no runner call.
  if (workspace.version === 0) return NO_REPOSITORY_SETTINGS;
  let text: string;
  try {
    const result = await workspace.run({ type: 'read', path: REPOSITORY_SETTINGS_PATH });
    if (result.kind !== 'text') return { ...NO_REPOSITORY_SETTINGS, notes: ['.claude/settings.json is not a text file; none of it applies.'] };
    text = result.content;
  } catch (err) {
    if (err instanceof WorkspaceInputError && err.message.startsWith('File does not exist.')) return NO_REPOSITORY_SETTINGS;
    log.warn('could not read the repository settings', { error: errorMessage(err) });
    return { ...NO_REPOSITORY_SETTINGS, notes: [`.claude/settings.json could not be read (${errorMessage(err)}); none of it applies this turn.`] };
  }
  const settings = parseRepositorySettings(text);
  if (settings.notes.length > 0) log.info('repository settings notes', { notes: settings.notes });
  return settings;
}

/**
 * What the settings add to a run: their rules, their command hooks (each run in the session's
 * sandbox through the runner's `hook_command` op, on the run's own workspace session), and their
 * variables for Bash and those hooks, set on that workspace session (never on the harness's own environment).
 */
export function repositoryControls(settings: RepositorySettings, workspace: WorkspaceSession): RepositoryControls {
  workspace.setCommandEnv(settings.env);
  const run = async ({ command, stdin, timeoutMs, stopKey, signal }: SandboxedHookRun) => {
    const stoppable = workspace.canStop ? { signal, key: stopKey } : undefined;
    return workspace.run({ type: 'hook_command', command, stdin, timeoutMs, ...(stoppable ? { stopKey } : {}) }, stoppable);
  };
  return {
    rules: settings.rules,
    hooks: settings.hooks.map((config) => createCommandHook(config, { run, cwd: () => workspace.cwd })),
  };
}

/** Reads the settings and builds the controls in one step; the notes are for the caller to show. */
export async function loadRepositoryControls(workspace: WorkspaceSession, log: Logger): Promise<{ controls: RepositoryControls; notes: string[] }> {
  const settings = await readRepositorySettings(workspace, log);
  return { controls: repositoryControls(settings, workspace), notes: settings.notes };
}
