import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { z } from 'zod';
import type { PersistedResultReader } from '../context/persisted-output.ts';
import type { Logger } from '../shared/logger.ts';
import type { WorkspaceSession } from './workspace-session.ts';

/** What a tool call can see and use. Built per call by the executor. */
export interface ToolContext {
  sessionId: string;
  turnId: string;
  toolUseId: string;
  /** The session's workspace through the runner; tracks version and cwd across calls. */
  workspace: WorkspaceSession;
  signal: AbortSignal;
  log: Logger;
  /** Large results persisted by the harness (functions/context): Read opens them by their reserved path. */
  persistedResults?: PersistedResultReader;
}

export interface ToolResult<Output> {
  data: Output;
}

export type ValidationResult = { ok: true } | { ok: false; message: string };

/**
 * The tool contract. Safety flags are decided per input; the builder's defaults are
 * fail-closed (not read-only, not concurrency-safe), so a tool that forgets one is treated as
 * the riskiest kind.
 */
export interface Tool<Input = any, Output = any> {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly inputSchema: z.ZodType<Input>;
  /** The description the model reads. */
  readonly description: string;
  /** Result text longer than this is persisted instead of inlined (Infinity: never). */
  readonly maxResultSizeChars: number;
  isEnabled(): boolean;
  isReadOnly(input: Input): boolean;
  isConcurrencySafe(input: Input): boolean;
  isDestructive(input: Input): boolean;
  interruptBehavior(): 'cancel' | 'block';
  validateInput(input: Input, ctx: ToolContext): Promise<ValidationResult>;
  call(input: Input, ctx: ToolContext): Promise<ToolResult<Output>>;
  mapToolResultToToolResultBlockParam(output: Output, toolUseId: string): ToolResultBlockParam;
}

export type ToolDefinition<Input, Output> = Pick<Tool<Input, Output>, 'name' | 'inputSchema' | 'description' | 'call' | 'mapToolResultToToolResultBlockParam'> &
  Partial<Omit<Tool<Input, Output>, 'name' | 'inputSchema' | 'description' | 'call' | 'mapToolResultToToolResultBlockParam'>>;

const TOOL_DEFAULTS = {
  aliases: [] as readonly string[],
  maxResultSizeChars: 100_000,
  isEnabled: () => true,
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  isDestructive: () => false,
  interruptBehavior: () => 'block' as const,
  validateInput: async (): Promise<ValidationResult> => ({ ok: true }),
};

export function buildTool<Input, Output>(def: ToolDefinition<Input, Output>): Tool<Input, Output> {
  return { ...TOOL_DEFAULTS, ...def };
}

/** A tool's own failure the model can act on; its message becomes an error tool_result verbatim. */
export class ToolError extends Error {
  override name = 'ToolError';
}
