import type { ContentBlockParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { LogAppender } from '../context/session-context.ts';
import type { AssistantResponse } from '../model/model-stream.ts';
import type { UsageRecord } from '../stores/budgets.ts';
import type { AgentLog } from './agent-driver.ts';
import type { TurnStopReason } from './query.ts';
import type { TurnRecorder } from './turn-recorder.ts';

/** How a sub-agent's run ended, as its parent's call (or its background record) reports it. */
export interface DriveOutcome {
  stopReason: TurnStopReason;
  error?: string;
  text: TextBlockParam[];
  totalTokens: number;
  toolUses: number;
}

/** Where a sub-agent's events go: its own log, the session's spend, progress for whoever watches it. */
export interface SubagentLogTarget {
  append: LogAppender;
  /** Sub-agents' model calls count toward the turn and the session (budgets, usage, cost). */
  recorder: Pick<TurnRecorder, 'countSubagentCall'>;
  progress: (event: Record<string, unknown>) => void;
}

/** Every token a response's usage counts: what the parent hears as the sub-agent's `totalTokens`. */
export function totalTokensOf(usage: Pick<UsageRecord, 'inputTokens' | 'outputTokens' | 'cacheReadInputTokens' | 'cacheCreationInputTokens'>): number {
  return usage.inputTokens + usage.outputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0);
}

/** The text blocks of a response: a sub-agent's answer is its last response's. */
export function answerText(content: readonly { type: string; text?: string }[]): TextBlockParam[] {
  return content.filter((b) => b.type === 'text').map((b) => ({ type: 'text' as const, text: b.text ?? '' }));
}

/** The sub-agent's counterpart of the turn's log (turn-recorder.ts): what each event means for it, into `outcome`. */
export function subagentLog(target: SubagentLogTarget, outcome: DriveOutcome): AgentLog {
  const { append, progress } = target;
  return {
    assistant: async ({ response, decisions }) => {
      const cost = await target.recorder.countSubagentCall(response);
      const stored = await append('assistant', 'assistant', response.content as ContentBlockParam[], {
        model: response.model,
        stopReason: response.stopReason,
        usage: { ...response.usage, costUsd: cost },
        decisions,
      });
      noteResponse(outcome, response);
      progress({ type: 'assistant_message', seq: stored.seq, content: response.content });
    },
    tool_result: async (event) => {
      const stored = await append('tool_result', 'user', [event.block, ...event.extra]);
      progress({ type: 'tool_result', seq: stored.seq, toolUseId: event.block.tool_use_id, toolName: event.toolName, isError: event.block.is_error === true });
    },
    tombstone: async (event) => {
      await append('tombstone', 'assistant', event.content as ContentBlockParam[], { error: event.error });
    },
    meta_user: async (event) => {
      await append('synthetic', 'user', [{ type: 'text', text: event.text }]);
    },
    tool_progress: (event) => progress({ type: 'tool_progress', toolUseId: event.toolUseId, toolName: event.toolName, progress: event.progress }),
    done: (event) => {
      outcome.stopReason = event.stopReason;
      if (event.error !== undefined) outcome.error = event.error;
    },
    // Text deltas, retries and the fallback stay inside the sub-agent (its log has the responses).
    text_delta: () => undefined,
    retry: () => undefined,
    fallback: () => undefined,
    // A sub-agent's permissions are unattended (agent-driver.ts): an ask is a deny and nothing waits behind one.
    permission_request: () => undefined,
    tool_deferred: () => undefined,
  };
}

/** The latest response is the answer so far; its tokens are the total the parent hears; its calls add up. */
function noteResponse(outcome: DriveOutcome, response: AssistantResponse): void {
  outcome.totalTokens = totalTokensOf(response.usage);
  outcome.text = answerText(response.content);
  outcome.toolUses += response.content.filter((b) => b.type === 'tool_use').length;
}
