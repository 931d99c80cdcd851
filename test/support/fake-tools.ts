import { z } from 'zod';
import { createLogger, type Logger } from '../../functions/shared/logger.ts';
import { buildTool, type Tool, type ToolContext, type ToolResult, type ToolUseContext } from '../../functions/tools/tool.ts';
import { WorkspaceSession } from '../../functions/runner-client/workspace-session.ts';

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every pending promise callback run (no timers involved). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

/** Log lines collected in memory, to assert what was logged. */
export function memoryLogger(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { log: createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line)) }), lines };
}

/** A tool context for tools that never touch the workspace: any runner call fails loudly. */
export function testContext(signal: AbortSignal = new AbortController().signal, log: Logger = memoryLogger().log): ToolUseContext {
  const workspace = new WorkspaceSession({
    deps: {
      runner: { invoke: async () => Promise.reject(new Error('no runner in this test')) },
      workspaceCredentials: { forWorkspace: async () => Promise.reject(new Error('no credentials in this test')) },
      config: { bucket: 'none' },
      log,
    },
    sessionId: 'ses_test',
    workspace: { id: 'ws_test', version: 0 },
    cwd: '/workspace',
  });
  return { sessionId: 'ses_test', turnId: 'turn_test', workspace, signal, log };
}

const gatedInput = z.strictObject({ key: z.string(), fail: z.boolean().optional(), command: z.string().optional() });
export type GatedInput = z.output<typeof gatedInput>;

/**
 * A tool whose calls wait until the test opens their gate (by `key`), recording when each
 * starts and finishes. `safe` decides concurrency safety (per input when a function).
 */
export function gatedTool(
  name: string,
  opts: {
    safe?: boolean | ((input: GatedInput) => boolean);
    readOnly?: boolean;
    events: string[];
    gates: Map<string, Deferred>;
    modify?: (input: GatedInput) => ToolResult<string>['contextModifier'];
    onCall?: (input: GatedInput, ctx: ToolContext) => void;
  },
): Tool<GatedInput, string> {
  return buildTool({
    name,
    inputSchema: gatedInput,
    description: `${name} test tool`,
    isConcurrencySafe: (input) => (typeof opts.safe === 'function' ? opts.safe(input) : opts.safe === true),
    isReadOnly: () => opts.readOnly === true,
    async call(input, ctx) {
      opts.events.push(`start ${input.key}`);
      opts.onCall?.(input, ctx);
      let gate = opts.gates.get(input.key);
      if (!gate) {
        gate = deferred();
        opts.gates.set(input.key, gate);
      }
      const aborted = new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      await Promise.race([gate.promise, aborted]);
      opts.events.push(`end ${input.key}`);
      if (ctx.signal.aborted) throw new Error(`${input.key} was aborted`);
      if (input.fail) throw new Error(`${input.key} failed`);
      return { data: `done ${input.key}`, ...(opts.modify ? { contextModifier: opts.modify(input) } : {}) };
    },
    mapToolResultToToolResultBlockParam: (data, toolUseId) => ({ type: 'tool_result', tool_use_id: toolUseId, content: data }),
  });
}

/** Opens the gate of `key` (creating it if the call has not started yet). */
export function open(gates: Map<string, Deferred>, key: string): void {
  let gate = gates.get(key);
  if (!gate) {
    gate = deferred();
    gates.set(key, gate);
  }
  gate.resolve();
}

export function instantTool(name: string, safe = true): Tool<Record<string, unknown>, string> {
  return buildTool({
    name,
    inputSchema: z.record(z.string(), z.unknown()),
    description: `${name} returns at once`,
    isConcurrencySafe: () => safe,
    isReadOnly: () => safe,
    call: async () => ({ data: 'ok' }),
    mapToolResultToToolResultBlockParam: (data, toolUseId) => ({ type: 'tool_result', tool_use_id: toolUseId, content: data }),
  });
}
