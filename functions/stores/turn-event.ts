import type { ContentBlock, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { SetupRecord } from './setup-record.ts';
import type { TodoItem } from './session-store.ts';

/** One question of an AskUserQuestion call, as the model wrote it. */
export interface AskedQuestion {
  question: string;
  header: string;
  options: { label: string; description: string; preview?: string }[];
  multiSelect: boolean;
}

/**
 * The records of a turn as the event log stores them and clients read them. They live with the
 * stores (the bottom layer) so that the event store names its records without importing the
 * engine that writes them.
 */

/** Why a turn stopped, as the query loop reports it. */
export type TurnStopReason =
  | 'end_turn'
  | 'max_turns'
  | 'max_tokens'
  | 'stop_sequence'
  | 'refusal'
  | 'pause_turn'
  | 'aborted'
  | 'model_error'
  /** A call needs a person's answer; the turn resumes when it arrives. */
  | 'awaiting_permission'
  /** A hook asked to end the turn. */
  | 'hook_stopped'
  /** The invocation nears its deadline; the turn continues in a fresh one. */
  | 'checkpoint'
  /** POST …/interrupt stopped it (or the session was deleted). */
  | 'interrupted'
  /** A budget ran out; turn_end's `budget` names which (functions/agent/budget.ts). */
  | 'budget_exceeded';

/** What clients see of a turn (the SSE event names are the `type`s). */
export type TurnEvent =
  /** `workspaceVersion`: the workspace version the turn starts from (absent in turns from before it was recorded). */
  | { type: 'turn_start'; sessionId: string; turnId: string; workspaceVersion?: number }
  | { type: 'text_delta'; text: string }
  | { type: 'assistant_message'; seq: number; content: ContentBlock[]; stopReason: string | null; usage: UsageTotals }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_progress'; toolUseId: string; toolName: string; progress: unknown }
  | { type: 'tool_result'; seq: number; toolUseId: string; toolName: string; isError: boolean; content: ToolResultBlockParam['content'] }
  /** This invocation is near its deadline; the turn goes on in another. Follow `eventsUrl`. */
  | { type: 'turn_continued'; turnId: string; eventsUrl: string }
  /** A call waits for an answer: POST /v1/sessions/:id/permissions/:toolUseId. */
  | { type: 'permission_request'; toolUseId: string; toolName: string; input: unknown; message: string }
  /** The agent asks a person (AskUserQuestion) and the turn pauses: POST /v1/sessions/:id/questions/:toolUseId/answer. */
  | { type: 'question'; toolUseId: string; questions: AskedQuestion[]; expiresAt: string }
  /** The agent presents its plan (ExitPlanMode) and the turn pauses until a person approves or rejects it: POST /v1/sessions/:id/plans/:toolUseId. */
  | { type: 'plan'; toolUseId: string; plan: string }
  /** The main agent rewrote its task list (TodoWrite): the whole list, as `GET /v1/sessions/:id` now shows it. */
  | { type: 'todos'; todos: TodoItem[] }
  /** A call was refused; `suggestion` appears when the count suggests adding a rule. */
  | { type: 'permission_denied'; toolUseId: string; toolName: string; count: number; suggestion?: string }
  /** Something the person running the session should know, e.g. a part of the repository's `.claude/settings.json` that was refused; `source` names where it comes from. */
  | { type: 'notice'; source: string; message: string }
  /** The streamed text since the last assistant_message was discarded (a broken stream); a retry follows. */
  | { type: 'tombstone'; seq: number; error: string }
  | { type: 'model_retry'; attempt: number; delayMs: number; status?: number; error: string }
  /** The primary model stayed overloaded: the rest of this invocation's calls go to `to`. */
  | { type: 'model_fallback'; from: string; to: string }
  /** The session's set-up steps start (before the first model call of its first turn): where they come from and what they may reach. */
  | { type: 'setup_start'; source: SetupRecord['source']; command: string; allowedDomains: string[]; timeoutSeconds: number }
  /**
   * The set-up steps ended: `status` `succeeded`, `failed` or `interrupted`, with the output's tail;
   * the session's `setup` keeps the same. `workspaceVersion`: the version they left, where the
   * turn's (and the session's) diff starts, so what they installed is not counted as the agent's.
   */
  | {
      type: 'setup_end';
      status: SetupRecord['status'];
      exitCode: number | null;
      timedOut: boolean;
      durationMs: number;
      outputTail: string;
      error?: string;
      workspaceVersion?: number;
    }
  /** The last event of every turn. `crashed`: the turn's process died; a reader that noticed wrote this (without `workspaceVersion`, the version the turn left). */
  | {
      type: 'turn_end';
      turnId: string;
      stopReason: TurnStopReason | 'internal_error' | 'crashed';
      usage: UsageTotals;
      error?: string;
      budget?: string;
      workspaceVersion?: number;
    };

/**
 * Tokens by kind and their cost in dollars. In events (`assistant_message`, `turn_end`) it is the
 * turn's running total; a stored message (`GET …/messages`) carries its own call's usage.
 */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
  costUsd?: number;
}
