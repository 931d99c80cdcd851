import { BASH_TOOL_NAME } from '../tools/bash-tool.ts';
import { loadShellParser } from '../tools/bash/shell-parser.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolUseContext } from '../tools/tool.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * What a turn whose pool has Bash starts while its first model request is out, so its first
 * command pays for neither: the runner's warm op (the copy brought up to date and a sandbox
 * started ahead: WorkspaceSession.warm) and this process's shell grammar, which every Bash call
 * parses its command with (tools/bash/shell-parser.ts; its first parse compiles the grammar's
 * code, so one is made here). Neither can fail the turn: each only logs. The promise settles
 * when both are done; the turn waits for it before it ends, so nothing it started outlives it
 * (a model takes far longer than either, so in practice it is long settled).
 */
export function getReadyForBash(registry: ToolRegistry, workspace: ToolUseContext['workspace'], log: Logger): Promise<void> {
  if (!registry.find(BASH_TOOL_NAME)) return Promise.resolve();
  const grammar = loadShellParser().then(
    (parser) => void parser.parse('true')?.delete(),
    (err: unknown) => log.warn('could not load the shell grammar ahead of the first Bash call', { error: String(err) }),
  );
  return Promise.all([workspace.warm(), grammar]).then(() => undefined);
}
