import { z } from 'zod';
import { bashOp, type BashResult } from './bash-op.ts';
import { createWorkspaceOp, type CreateWorkspaceResult } from './create-workspace-op.ts';
import { readOp, type ReadResult } from './read-op.ts';

/** Every operation the runner performs. This file only lists them. */
export const RUNNER_OPS = {
  bash: bashOp,
  read: readOp,
  create_workspace: createWorkspaceOp,
} as const;

export const runnerOpSchema = z.discriminatedUnion('type', [bashOp.schema, readOp.schema, createWorkspaceOp.schema]);

export type RunnerOp = z.infer<typeof runnerOpSchema>;
export type OpResult = BashResult | ReadResult | CreateWorkspaceResult;
export type { BashResult, CreateWorkspaceResult, ReadResult };
