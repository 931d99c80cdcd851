import type { ModelClient } from '../model/model-client.ts';
import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { callModel } from '../model/model-call.ts';
import type { ModelRequest } from '../model/model-stream.ts';

export const ERROR_NOT_ENOUGH_MESSAGES = 'Not enough messages to compact.';
/** Most output tokens a summary may take (docs/context.md, "Token accounting and compaction"). */
export const MAX_SUMMARY_OUTPUT_TOKENS = 20_000;

const SUMMARY_INSTRUCTIONS = [
  'Your context is about to be compacted. Write a summary of the conversation so far that lets you continue the work without it.',
  'Include: what the user asked for (their exact requests and any constraints), what has been done (files read or changed, commands run and what they showed),',
  'decisions made and why, errors met and how they were resolved, and what remains to do next.',
  'Quote file paths, identifiers and error messages exactly. Do not call any tools; reply with the summary text only.',
].join(' ');

/** What the model reads where the summarised conversation used to be. */
export function summaryMessageText(summary: string): string {
  return (
    'This session is being continued from a previous conversation that ran out of context. ' +
    `The summary below covers the earlier portion of the conversation.\n\n${summary.trim()}`
  );
}

/**
 * Where the kept tail starts: the last `keepRecent` messages (at most half, so a short
 * conversation still has something to summarise), moved forward past any user message carrying
 * tool results (their tool_use would be summarised away and leave them orphaned).
 */
export function splitForCompaction(messages: readonly MessageParam[], keepRecent: number): number {
  const keep = Math.min(keepRecent, Math.floor(messages.length / 2));
  let start = messages.length - keep;
  while (start < messages.length && hasToolResult(messages[start]!)) start++;
  return start;
}

export interface CompactionInput {
  client: ModelClient;
  /** Model, system prompt and tools as the conversation uses them: the summary call shares their cache. */
  base: Pick<ModelRequest, 'model' | 'system' | 'tools' | 'max_tokens'>;
  /** The conversation as the model sees it (replacements applied). */
  messages: readonly MessageParam[];
  keepRecent: number;
  signal: AbortSignal;
  maxRetries: number;
  retryBaseDelayMs: number;
  fallbackModel?: string;
}

export interface CompactionResult {
  summary: string;
  /** Messages kept verbatim after the summary. */
  kept: MessageParam[];
  summarizedCount: number;
}

/** Summarises everything before the kept tail with one model call. Throws when it cannot. */
export async function summarizeConversation(input: CompactionInput): Promise<CompactionResult> {
  const start = splitForCompaction(input.messages, input.keepRecent);
  if (start === 0) throw new Error(ERROR_NOT_ENOUGH_MESSAGES);
  const toSummarize = input.messages.slice(0, start);
  const request: ModelRequest = {
    ...input.base,
    max_tokens: Math.min(input.base.max_tokens, MAX_SUMMARY_OUTPUT_TOKENS),
    messages: withInstructions(toSummarize),
  };
  let text = '';
  for await (const event of callModel({
    client: input.client,
    request,
    signal: input.signal,
    maxRetries: input.maxRetries,
    baseDelayMs: input.retryBaseDelayMs,
    fallbackModel: input.fallbackModel,
  })) {
    if (event.type === 'message') {
      text = event.response.content
        .flatMap((b) => (b.type === 'text' ? [b.text] : []))
        .join('\n')
        .trim();
    }
  }
  if (!text) throw new Error('The compaction summary came back empty.');
  return { summary: text, kept: input.messages.slice(start), summarizedCount: start };
}

function withInstructions(messages: readonly MessageParam[]): MessageParam[] {
  const out = [...messages];
  const last = out[out.length - 1];
  const instructions: ContentBlockParam = { type: 'text', text: SUMMARY_INSTRUCTIONS };
  if (last?.role === 'user') {
    const content: ContentBlockParam[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
    out[out.length - 1] = { role: 'user', content: [...content, instructions] };
  } else {
    out.push({ role: 'user', content: [instructions] });
  }
  return out;
}

function hasToolResult(message: MessageParam): boolean {
  return message.role === 'user' && typeof message.content !== 'string' && message.content.some((b) => b.type === 'tool_result');
}
