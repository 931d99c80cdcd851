import type { z } from 'zod';
import type { OpContext } from './op-context.ts';

/**
 * One kind of runner operation. Adding an operation means adding a file that exports one of
 * these and listing it in `ops/index.ts`; the request schema and the dispatch follow from it.
 */
export interface RunnerOpDefinition<Schema extends z.ZodObject = z.ZodObject, Result = unknown> {
  /** The op's `type` literal and its fields. */
  schema: Schema;
  /** Whether the op may change the workspace (then the runner rescans and publishes afterwards). */
  mutatesWorkspace: boolean;
  /** Whether the op works on the copy brought to the request's version (all but discarding the copy). @default true */
  needsCopy?: boolean;
  run(ctx: OpContext, op: z.output<Schema>): Promise<OpOutcome<Result>>;
}

export interface OpOutcome<Result> {
  result: Result;
  /** The shell's cwd after the op, for ops that run commands. */
  cwd?: string;
}

export function defineOp<Schema extends z.ZodObject, Result>(def: RunnerOpDefinition<Schema, Result>): RunnerOpDefinition<Schema, Result> {
  return def;
}
