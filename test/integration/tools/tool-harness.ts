import { afterAll, beforeAll } from 'vitest';
import { startLocalStack, type LocalStack } from '../../../local/stack.ts';
import { createParitySession, readParityFile, runParityTurn, type ParityCase, type ParityLine, type ParityStep } from '../../../scripts/parity-case.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

/** One local stack per test file; `run` seeds a session and drives one turn of scripted tool calls. */
export function useToolStack() {
  const tmp = makeTempDir();
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({
      dataDir: tmp.dir,
      brain: () => ({ error: { status: 500, type: 'api_error', message: 'unscripted' } }),
      logLevel: 'error',
    });
  });
  afterAll(async () => {
    await stack.stop();
    tmp.cleanup();
  });
  return {
    get stack() {
      return stack;
    },
    session: (files?: ParityCase['files']) => createParitySession(stack, files),
    turn: (sessionId: string, steps: ParityStep[]) => runParityTurn(stack, sessionId, steps),
    /** A fresh session with `files`, then one turn; results keyed by tool_use id. */
    async run(files: ParityCase['files'], steps: ParityStep[]): Promise<Record<string, ParityLine>> {
      const lines = await runParityTurn(stack, await createParitySession(stack, files), steps);
      return Object.fromEntries(lines.map((l) => [l.id, l]));
    },
    /** Like `run`, then the exact bytes of `paths` (relative) as the workspace holds them; undefined when absent. */
    async runAndRead(files: ParityCase['files'], steps: ParityStep[], paths: string[]) {
      const sessionId = await createParitySession(stack, files);
      const lines = await runParityTurn(stack, sessionId, steps);
      const bytes: Record<string, Buffer | undefined> = {};
      for (const rel of paths) bytes[rel] = await readParityFile(stack, sessionId, rel);
      return { results: Object.fromEntries(lines.map((l) => [l.id, l])) as Record<string, ParityLine>, bytes };
    },
  };
}

export const call = (id: string, name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name, input });
export const ok = (content: unknown) => ({ is_error: false, content });
export const err = (content: unknown) => ({ is_error: true, content });
