import { z } from 'zod';
import { readInstructionTree, type InstructionFile } from './files/instruction-files.ts';
import { defineOp } from './op.ts';

export interface ReadInstructionsResult {
  type: 'read_instructions';
  /** In the order asked for, each followed by what its `@path` imports brought in; missing ones left out. */
  files: InstructionFile[];
}

/** The limits every read of instructions files carries (the harness's settings). */
export const instructionLimitsSchema = z.object({
  maxFileChars: z.number().int().positive().max(1_000_000),
  maxDepth: z.number().int().min(1).max(10),
});

/**
 * Reads a session's instructions files (the root CLAUDE.md and AGENTS.md, named by the harness)
 * with their `@path` imports, at the turn's start: one call however many files there are. A
 * file imported by two of them is read once.
 */
export const readInstructionsOp = defineOp({
  schema: z.object({
    type: z.literal('read_instructions'),
    /** Virtual paths of the files read in their own right. */
    paths: z.array(z.string().max(4096)).max(16),
    limits: instructionLimitsSchema,
  }),
  mutatesWorkspace: false,
  async run(ctx, op) {
    const seen = new Set<string>();
    const files: InstructionFile[] = [];
    for (const p of op.paths) files.push(...(await readInstructionTree(ctx, p, op.limits, seen)));
    const result: ReadInstructionsResult = { type: 'read_instructions', files };
    return { result };
  },
});
