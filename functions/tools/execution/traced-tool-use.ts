import { traced, type Tracing } from '../../shared/tracing.ts';
import { runToolUse, type ToolUseEnv, type ToolUseOutcome } from '../run-tool-use.ts';
import type { ToolUseContext } from '../tool.ts';
import type { ExecutorOptions } from './streaming-executor.ts';

/**
 * `runToolUse` in a `tool` span: the runner ops and sub-agent model calls a call makes are its
 * children. An error result is an attribute, not a failed span (the call itself worked: its
 * tool_result tells the model what went wrong).
 */
export function tracedToolUse(tracing: Tracing): NonNullable<ExecutorOptions['run']> {
  return (block, ctx: ToolUseContext, env: ToolUseEnv): Promise<ToolUseOutcome> =>
    traced(tracing, 'tool', { 'stratus.tool.name': block.name, 'stratus.tool.use_id': block.id, 'stratus.session_id': ctx.sessionId }, async (span) => {
      const outcome = await runToolUse(block, ctx, env);
      span.annotate('stratus.tool.outcome', outcome.kind === 'ask' ? 'ask' : outcome.result.is_error ? 'error' : 'ok');
      return outcome;
    });
}
