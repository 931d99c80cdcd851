import type { Schemas, TurnEvent } from './api.ts';
import { agentProgressLine, isAgentProgress } from './agent-progress.ts';
import { resultText } from './format.ts';

export interface ToolCall {
  kind: 'tool';
  id: string;
  name: string;
  input: unknown;
  startedAt: number;
  endedAt?: number;
  progress?: string;
  result?: string;
  isError?: boolean;
  /** The call waits for an answer (permission_request), or was refused. */
  waiting?: string;
  denied?: boolean;
}

export type TurnItem =
  | { kind: 'text'; text: string; streaming: boolean }
  | ToolCall
  | { kind: 'notice'; text: string }
  | { kind: 'model'; startedAt: number; endedAt: number };

/** A turn as the console shows it while it streams: what happened, in order, with client-side timings. */
export interface TurnState {
  turnId?: string;
  items: TurnItem[];
  /** When the model call now running started (turn start, or the last tool result). */
  callStart: number;
  startedAt: number;
  end?: { stopReason: string; usage: Schemas['Usage']; error?: string; budget?: string; at: number };
  usage?: Schemas['Usage'];
  /** The turn ended and the stored log shows it now. */
  settled?: boolean;
  /** The agent's task list as this turn last wrote it (TodoWrite). */
  todos?: Schemas['TodoItem'][];
}

export const emptyTurn = (now = Date.now()): TurnState => ({ items: [], callStart: now, startedAt: now });

const updateTool = (s: TurnState, id: string, change: (t: ToolCall) => Partial<ToolCall>): TurnItem[] =>
  s.items.map((item) => (item.kind === 'tool' && item.id === id ? { ...item, ...change(item) } : item));

/** The next state after one event (pure: `now` is when the event arrived). */
export function reduceTurn(s: TurnState, event: TurnEvent, now = Date.now()): TurnState {
  switch (event.type) {
    case 'turn_start':
      return { ...s, turnId: event.turnId };
    case 'text_delta': {
      const last = s.items.at(-1);
      if (last?.kind === 'text' && last.streaming) return { ...s, items: [...s.items.slice(0, -1), { ...last, text: last.text + event.text }] };
      return { ...s, items: [...s.items, { kind: 'text', text: event.text, streaming: true }] };
    }
    case 'assistant_message':
      return {
        ...s,
        usage: event.usage,
        items: [...s.items.map((i) => (i.kind === 'text' ? { ...i, streaming: false } : i)), { kind: 'model', startedAt: s.callStart, endedAt: now }],
      };
    case 'tombstone':
      return {
        ...s,
        items: [...s.items.filter((i) => !(i.kind === 'text' && i.streaming)), { kind: 'notice', text: `Stream broke (${event.error}); retrying.` }],
      };
    case 'tool_use':
      return { ...s, items: [...s.items, { kind: 'tool', id: event.id, name: event.name, input: event.input, startedAt: now }] };
    case 'tool_progress':
      return {
        ...s,
        items: updateTool(s, event.toolUseId, (t) => ({
          progress: isAgentProgress(event.progress)
            ? `${t.progress ? `${t.progress}\n` : ''}${agentProgressLine(event.progress)}`
            : progressText(event.progress),
        })),
      };
    case 'tool_result':
      return {
        ...s,
        callStart: now,
        items: updateTool(s, event.toolUseId, () => ({ endedAt: now, result: resultText(event.content), isError: event.isError, waiting: undefined })),
      };
    case 'permission_request':
      return { ...s, items: updateTool(s, event.toolUseId, () => ({ waiting: event.message })) };
    case 'question':
      return { ...s, items: updateTool(s, event.toolUseId, () => ({ waiting: 'question' })) };
    case 'plan':
      return { ...s, items: updateTool(s, event.toolUseId, () => ({ waiting: 'plan to approve' })) };
    case 'todos':
      return { ...s, todos: event.todos };
    case 'permission_denied':
      return { ...s, items: updateTool(s, event.toolUseId, () => ({ denied: true, waiting: undefined })) };
    case 'model_retry':
      return {
        ...s,
        items: [...s.items, { kind: 'notice', text: `Model call failed (${event.error}); retry ${event.attempt} in ${Math.round(event.delayMs / 1_000)} s.` }],
      };
    case 'notice':
      return { ...s, items: [...s.items, { kind: 'notice', text: event.message }] };
    case 'model_fallback':
      return { ...s, items: [...s.items, { kind: 'notice', text: `Switched model from ${event.from} to ${event.to}.` }] };
    case 'setup_start':
      return {
        ...s,
        items: [...s.items, { kind: 'notice', text: `Set-up steps running: ${event.command.split('\n')[0]} (limit ${event.timeoutSeconds} s).` }],
      };
    case 'setup_end':
      return {
        ...s,
        items: [
          ...s.items,
          {
            kind: 'notice',
            text: `Set-up steps ${event.status}${event.exitCode !== null && event.status !== 'succeeded' ? ` (exit code ${event.exitCode})` : ''} after ${(event.durationMs / 1_000).toFixed(1)} s.`,
          },
        ],
      };
    case 'turn_end':
      return { ...s, usage: event.usage, end: { stopReason: event.stopReason, usage: event.usage, error: event.error, budget: event.budget, at: now } };
    default:
      return s;
  }
}

function progressText(progress: unknown): string {
  if (typeof progress === 'string') return progress;
  const p = progress as { output?: string; stdout?: string } | undefined;
  return p?.output ?? p?.stdout ?? JSON.stringify(progress ?? '');
}
