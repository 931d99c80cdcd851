import { startTurn, startTurnAsync, type TurnHandle } from '../../turn/turn.ts';
import type { TurnEvent } from '../../stores/turn-event.ts';
import { answerPermission, pendingAsks, remoteSession, turnEventsOf, type PermissionAnswer } from '../remote/remote-turns.ts';
import { finalAnswer, remoteState } from '../remote/remote-view.ts';
import type { RemoteDeps } from '../remote/remote-sessions.ts';

/** Where a tool call runs: the caller's tenant, this invocation's deadline, and how to report progress. */
export interface McpCall {
  tenantId: string;
  deadlineAt?: number;
  /** Sends one progress notification (only when the client asked for progress). */
  progress: (message: string) => Promise<void>;
}

/** A waiting stream of a turn stops this long before the invocation's deadline, telling the caller to look again. */
const DEADLINE_MARGIN_MS = 10_000;

/** Runs a prompt: at once (`wait: false`, the turn runs in another invocation) or to the turn's end, with progress. */
export async function runPrompt(deps: RemoteDeps, call: McpCall, args: { sessionId: string; prompt: string; wait: boolean }) {
  const at = { sessionId: args.sessionId, tenantId: call.tenantId };
  if (!args.wait) {
    const started = await startTurnAsync(deps, { ...at, prompt: args.prompt });
    return { sessionId: args.sessionId, turnId: started.turnId, state: 'working' as const };
  }
  const turn = await startTurn(deps, { ...at, prompt: args.prompt, ...(call.deadlineAt ? { deadlineAt: call.deadlineAt } : {}) });
  return waitForTurn(deps, call, turn);
}

/** Answers waiting calls; when none waits any more the turn resumes, and this follows it to its end. */
export async function answerAndResume(deps: RemoteDeps, call: McpCall, args: { sessionId: string } & PermissionAnswer) {
  const { sessionId, ...answer } = args;
  const turn = await answerPermission(deps, { sessionId, tenantId: call.tenantId, deadlineAt: call.deadlineAt }, answer);
  if (turn) return waitForTurn(deps, call, turn);
  const still = await pendingAsks(deps, sessionId);
  return { sessionId, state: 'input-required' as const, pending: still.map(pendingView) };
}

/** Follows the turn, one progress notification per step, then says how it ended and what the agent answered. */
async function waitForTurn(deps: RemoteDeps, call: McpCall, turn: TurnHandle) {
  const keepGoing = () => call.deadlineAt === undefined || call.deadlineAt - Date.now() > DEADLINE_MARGIN_MS;
  let end: Extract<TurnEvent, { type: 'turn_end' }> | undefined;
  for await (const { event } of turnEventsOf(deps, turn, keepGoing)) {
    const step = progressLine(event);
    if (step) await call.progress(step);
    if (event.type === 'turn_end') end = event;
  }
  const record = await remoteSession(deps, turn.sessionId, call.tenantId);
  const pending = await pendingAsks(deps, turn.sessionId);
  return {
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    state: end ? remoteState(record, deps.clock()) : ('working' as const),
    stopReason: end?.stopReason ?? null,
    ...(end?.error ? { error: end.error } : {}),
    answer: end ? await finalAnswer(deps, record) : null,
    pending: pending.map(pendingView),
  };
}

/** A waiting call as the tools show it: what to pass to answer_permission. */
export function pendingView(p: { toolUseId: string; toolName: string; input: unknown; message?: string }) {
  return { toolUseId: p.toolUseId, toolName: p.toolName, input: p.input, message: p.message ?? null };
}

/** One line per step a person following the turn cares about; nothing for text deltas and bookkeeping. */
function progressLine(event: TurnEvent): string | undefined {
  switch (event.type) {
    case 'turn_start':
      return 'Turn started';
    case 'tool_use':
      return `Running ${event.name}`;
    case 'tool_result':
      return `${event.toolName} ${event.isError ? 'failed' : 'finished'}`;
    case 'permission_request':
      return `${event.toolName} waits for permission (${event.toolUseId})`;
    case 'turn_end':
      return `Turn ended: ${event.stopReason}`;
    default:
      return undefined;
  }
}
