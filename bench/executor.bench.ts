import { z } from 'zod';
import { createLogger } from '../functions/shared/logger.ts';
import { StreamingToolExecutor } from '../functions/tools/execution/streaming-executor.ts';
import { assembleToolPool } from '../functions/tools/registry.ts';
import type { ToolUseEnv } from '../functions/tools/run-tool-use.ts';
import { buildTool, type ToolUseContext } from '../functions/tools/tool.ts';
import { WorkspaceSession } from '../functions/runner-client/workspace-session.ts';

/**
 * The executor's own overhead per tool call: fake tools that return at once, so everything
 * measured is scheduling, the per-call pipeline (parse, validate, hooks, permission, map) and
 * result ordering. Prints mean microseconds per call for a safe batch and for serial calls.
 */
export async function run(): Promise<void> {
  const instant = (name: string, safe: boolean) =>
    buildTool({
      name,
      inputSchema: z.strictObject({ n: z.number() }),
      description: name,
      isConcurrencySafe: () => safe,
      isReadOnly: () => safe,
      call: async (input) => ({ data: input.n }),
      mapToolResultToToolResultBlockParam: (n, id) => ({ type: 'tool_result', tool_use_id: id, content: String(n) }),
    });
  const env: ToolUseEnv = {
    pool: assembleToolPool({ builtins: [instant('Safe', true), instant('Unsafe', false)] }),
    permissions: { mode: 'default', rules: [], unattended: false },
    hooks: [],
  };
  const log = createLogger({ level: 'error', write: () => {} });
  const workspace = new WorkspaceSession({
    deps: {
      runner: { invoke: async () => Promise.reject(new Error('unused')) },
      workspaceCredentials: { forWorkspace: async () => Promise.reject(new Error('unused')) },
      config: { bucket: 'b' },
      log,
    },
    sessionId: 's',
    workspace: { id: 'w', version: 0 },
    cwd: '/workspace',
  });
  const context: ToolUseContext = { sessionId: 's', turnId: 't', workspace, signal: new AbortController().signal, log };

  async function measure(label: string, name: string, callsPerBatch: number, batches: number): Promise<void> {
    const once = async () => {
      const executor = new StreamingToolExecutor(env, context);
      for (let i = 0; i < callsPerBatch; i++) executor.addTool({ id: `t${i}`, name, input: { n: i } });
      let count = 0;
      for await (const _ of executor.getRemainingResults()) count++;
      if (count !== callsPerBatch) throw new Error('lost a result');
    };
    for (let i = 0; i < 200; i++) await once(); // warm up
    const start = process.hrtime.bigint();
    for (let i = 0; i < batches; i++) await once();
    const us = Number(process.hrtime.bigint() - start) / 1_000 / (callsPerBatch * batches);
    console.log(`${label.padEnd(44)} ${us.toFixed(1).padStart(7)} µs per call  (${callsPerBatch * batches} calls)`);
  }

  await measure('10 concurrency-safe calls per response', 'Safe', 10, 2_000);
  await measure('5 serial (non-safe) calls per response', 'Unsafe', 5, 2_000);
  await measure('1 call per response', 'Safe', 1, 10_000);
}
