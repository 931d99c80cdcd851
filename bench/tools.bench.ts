import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runToolUse } from '../functions/tools/run-tool-use.ts';
import { WorkspaceSession } from '../functions/runner-client/workspace-session.ts';
import { startLocalStack } from '../local/stack.ts';
import { createParitySession } from '../scripts/parity-case.ts';

const ITERATIONS = 30;

/**
 * Per-call latency of Read, Edit, Grep and Bash through the full local tool path: executor →
 * Lambda Invoke client → runner (materialise, op, rescan/publish) → bwrap for Bash → result.
 * The model is left out: this is what one tool call costs.
 */
export async function run(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'stratus-bench-tools-'));
  const stack = await startLocalStack({ dataDir, logLevel: 'error' });
  try {
    const files: Record<string, string> = { 'src/target.ts': 'export const counter = 0;\n' };
    for (let i = 0; i < 200; i++) files[`src/mod${i}.ts`] = `export function f${i}() {\n  return ${i};\n}\n`.repeat(20);
    const sessionId = await createParitySession(stack, files);
    const session = (await stack.deps.sessions.get(sessionId))!;
    const workspace = new WorkspaceSession({ deps: stack.deps, sessionId, workspace: session.workspace, cwd: session.cwd });
    const ctx = { sessionId, turnId: 'bench', workspace, signal: new AbortController().signal, log: stack.deps.log };
    // The full per-call pipeline (validation, permissions in bypass mode, hooks: none) around the runner.
    const env = { pool: stack.deps.tools, permissions: { mode: 'bypassPermissions' as const, rules: [], unattended: false }, hooks: [] };
    const call = async (name: string, input: Record<string, unknown>) => {
      const started = performance.now();
      const outcome = await runToolUse({ id: `toolu_${name}`, name, input }, ctx, env);
      const ms = performance.now() - started;
      if (outcome.kind !== 'result' || outcome.result.is_error) throw new Error(`${name} failed: ${JSON.stringify(outcome)}`);
      return ms;
    };

    const timings: Record<string, number[]> = { Read: [], Edit: [], Grep: [], Bash: [] };
    for (let i = 0; i < ITERATIONS; i++) {
      timings.Read!.push(await call('Read', { file_path: `/workspace/src/mod${i}.ts` }));
      await call('Read', { file_path: '/workspace/src/target.ts' });
      timings.Edit!.push(await call('Edit', { file_path: '/workspace/src/target.ts', old_string: `counter = ${i};`, new_string: `counter = ${i + 1};` }));
      timings.Grep!.push(await call('Grep', { pattern: `f${i}\\(`, output_mode: 'content' }));
      timings.Bash!.push(await call('Bash', { command: 'ls src | wc -l' }));
    }
    console.log(`${ITERATIONS} calls each, workspace of ${Object.keys(files).length} files (${stack.deps.config.bucket})`);
    for (const [tool, ms] of Object.entries(timings)) {
      console.log(`${tool.padEnd(5)} median ${percentile(ms, 50).toFixed(1)} ms   p95 ${percentile(ms, 95).toFixed(1)} ms`);
    }
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
