import type { ModelClient } from '../model/model-client.ts';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ModelRequest } from '../model/model-stream.ts';
import { BYTES_PER_TOKEN } from './limits.ts';

/** Usage as a response reports it: every token of the request plus the output. */
export interface UsageLike {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
}

/** The context a response occupied: everything sent (cached or not) plus what it wrote. */
export function contextTokensOf(usage: UsageLike): number {
  return usage.inputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0) + usage.outputTokens;
}

/** A rough count for messages no response has measured yet (~4 chars per token of their JSON). */
export function estimateMessagesTokens(messages: readonly MessageParam[]): number {
  let chars = 0;
  for (const m of messages) {
    if (typeof m.content === 'string') {
      chars += m.content.length;
      continue;
    }
    for (const b of m.content) {
      if (b.type === 'text') chars += b.text.length;
      else if (b.type === 'tool_result') chars += typeof b.content === 'string' ? b.content.length : JSON.stringify(b.content ?? '').length;
      else if (b.type === 'tool_use') chars += b.name.length + JSON.stringify(b.input).length;
      else chars += JSON.stringify(b).length;
    }
  }
  return Math.ceil(chars / BYTES_PER_TOKEN);
}

/**
 * Tokens the next request will take: the last response's measured usage plus an estimate of
 * the messages that came after it (the measured part is exact; only the tail is guessed).
 */
export function tokenCountWithEstimation(messages: readonly MessageParam[], measured: { tokens: number; messageCount: number } | undefined): number {
  if (!measured || measured.messageCount > messages.length) return estimateMessagesTokens(messages);
  return measured.tokens + estimateMessagesTokens(messages.slice(measured.messageCount));
}

/**
 * The exact count from the count-tokens endpoint: for decisions that spend a model call. Bedrock
 * has no such endpoint; the promise rejects and callers keep their estimate.
 */
export async function countTokensExactly(client: ModelClient, request: Pick<ModelRequest, 'model' | 'system' | 'tools' | 'messages'>): Promise<number> {
  if (!client.messages.countTokens) throw new Error('This model provider has no token-counting endpoint.');
  const out = await client.messages.countTokens({
    model: request.model,
    messages: request.messages,
    ...(request.system !== undefined ? { system: request.system } : {}),
    ...(request.tools !== undefined ? { tools: request.tools as never } : {}),
  });
  return out.input_tokens;
}
