import type { TurnDeps } from '../agent/turn-deps.ts';
import { asyncEventSchema } from '../deps/continuation.ts';
import { purgeSession, type DeleteSessionDeps } from '../session/delete-session.ts';
import { continueTurn } from '../turn/turn.ts';
import { runBackgroundAgent } from '../agent/background-agent.ts';
import { notifyTaskEnd } from '../api/a2a/a2a-follow.ts';
import type { RemoteDeps } from '../api/remote/remote-sessions.ts';

/**
 * What the API function does when invoked asynchronously (not through its URL): carry on a turn
 * that checkpointed (or starts asynchronously), run a background sub-agent, or remove a deleted session's data. Unknown
 * events are an error, so a misrouted invoke is visible.
 */
export async function handleAsyncEvent(deps: TurnDeps & DeleteSessionDeps & RemoteDeps, event: unknown, deadlineAt?: number): Promise<void> {
  const parsed = asyncEventSchema.safeParse(event);
  if (!parsed.success) throw new Error(`Unknown asynchronous event for the API function: ${JSON.stringify(event).slice(0, 200)}`);
  if (parsed.data.kind === 'purge_session') return purgeSession(deps, parsed.data.sessionId);
  if (parsed.data.kind === 'run_subagent') return runBackgroundAgent(deps, parsed.data, deadlineAt);
  const ended = await continueTurn(deps, parsed.data, deadlineAt);
  // An A2A task whose turn ended here is pushed from here (functions/api/a2a; a no-op without webhooks).
  if (ended && ended.stopReason !== 'checkpoint') await notifyTaskEnd(deps, parsed.data.sessionId);
}
