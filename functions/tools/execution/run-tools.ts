import type { ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { ToolRegistry } from '../registry.ts';
import type { ToolUseEnv } from '../run-tool-use.ts';
import type { ToolUseContext } from '../tool.ts';
import { isCallConcurrencySafe } from './concurrency.ts';
import { StreamingToolExecutor, type ExecutorOptions, type ExecutorUpdate } from './streaming-executor.ts';

type Block = Pick<ToolUseBlock, 'id' | 'name' | 'input'>;

export interface Batch {
  isConcurrencySafe: boolean;
  blocks: Block[];
}

/** Consecutive concurrency-safe calls form one batch; each other call is a batch of its own. */
export function partitionToolCalls(blocks: readonly Block[], pool: ToolRegistry): Batch[] {
  const batches: Batch[] = [];
  for (const block of blocks) {
    const safe = isCallConcurrencySafe(pool, block);
    const last = batches[batches.length - 1];
    if (safe && last?.isConcurrencySafe) last.blocks.push(block);
    else batches.push({ isConcurrencySafe: safe, blocks: [block] });
  }
  return batches;
}

/**
 * Batch execution, for calls known all at once (e.g. resuming after a durable ask): batches
 * run one after another; inside a safe batch calls run together (at most `maxConcurrency`).
 * Context modifiers from a safe batch apply after the batch in call order, from a serial call
 * at once; the next batch sees the result. Results come out in call order. Bash sibling
 * cancellation and durable-ask deferral work across the batches as in streaming execution.
 */
export async function* runTools(
  blocks: readonly Block[],
  env: ToolUseEnv,
  context: ToolUseContext,
  opts: ExecutorOptions = {},
): AsyncGenerator<ExecutorUpdate, ToolUseContext> {
  // One executor over the whole list: its queue rule (nothing overtakes a queued unsafe call,
  // safe neighbours run together) is exactly the batch partition, and the final context and
  // the cancellation state carry across batches.
  const executor = new StreamingToolExecutor(env, context, opts);
  for (const block of blocks) executor.addTool(block);
  yield* executor.getRemainingResults();
  return executor.currentContext;
}
