import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { Deps } from '../deps/deps.ts';
import { errorMessage } from '../shared/errors.ts';
import { EventFeed } from '../shared/event-feed.ts';
import type { Logger } from '../shared/logger.ts';
import type { MessageKind, StoredMessage } from '../stores/message-store.ts';
import type { SessionRecord, TurnSummary } from '../stores/session-store.ts';
import { WorkspaceSession } from '../tools/workspace-session.ts';
import { query, type TurnStopReason } from './query.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import { danglingToolUses, syntheticResults, toApiMessages } from './transcript.ts';
import type { TurnEvent, UsageTotals } from './turn-events.ts';

export interface TurnHandle {
  sessionId: string;
  turnId: string;
  events: EventFeed<TurnEvent>;
  /** Resolves when the turn has ended and its lease is released. */
  done: Promise<TurnSummary>;
}

/**
 * Starts one stateless turn: takes the session's lease (409 if another turn holds it), then
 * runs in the background — reload, repair, query loop — writing every message the moment it
 * exists. Callers stream `events` or await `done`; neither is needed for the turn to finish.
 */
export async function startTurn(deps: Deps, opts: { sessionId: string; tenantId: string; prompt: string }): Promise<TurnHandle> {
  await deps.sessions.getForTenant(opts.sessionId, opts.tenantId);
  const turnId = deps.newId('turn');
  const now = deps.clock();
  const lease = { owner: `${deps.instanceId}/${turnId}`, turnId, expiresAt: now + deps.config.turn.leaseMs };
  const session = await deps.sessions.acquireLease(opts.sessionId, lease, now);
  const events = new EventFeed<TurnEvent>();
  const log = deps.log.child({ sessionId: opts.sessionId, turnId });
  const done = runTurn(deps, { session, turnId, owner: lease.owner, prompt: opts.prompt, events, log, startedAt: now });
  return { sessionId: opts.sessionId, turnId, events, done };
}

interface TurnRun {
  session: SessionRecord;
  turnId: string;
  owner: string;
  prompt: string;
  events: EventFeed<TurnEvent>;
  log: Logger;
  startedAt: number;
}

async function runTurn(deps: Deps, run: TurnRun): Promise<TurnSummary> {
  const { session, turnId, owner, events, log } = run;
  const usage: UsageTotals = { ...session.usage };
  const turnUsage: UsageTotals = { inputTokens: 0, outputTokens: 0 };
  let nextSeq = session.messageCount;
  let stopReason: TurnStopReason | 'internal_error' = 'internal_error';
  let error: string | undefined;
  const workspace = new WorkspaceSession(
    { runner: deps.runner, credentials: deps.workspaceCredentials, bucket: deps.config.bucket },
    session.sessionId,
    session.workspace,
    session.cwd,
    {},
    session.fileState,
  );
  const leaseExpiry = () => deps.clock() + deps.config.turn.leaseMs;

  /** Write-ahead: the message is durable before anyone sees it; the head moves with it. */
  const append = async (kind: MessageKind, role: 'user' | 'assistant', content: ContentBlockParam[], extra: Partial<StoredMessage> = {}) => {
    const message: StoredMessage = {
      sessionId: session.sessionId, seq: nextSeq, uuid: deps.newId('msg'), turnId, kind, role, content,
      createdAt: new Date(deps.clock()).toISOString(), ...extra,
    };
    await deps.messages.append(message);
    nextSeq += 1;
    await deps.sessions.updateUnderLease(
      session.sessionId, owner,
      { messageCount: nextSeq, workspace: workspace.workspace, cwd: workspace.cwd, fileState: workspace.fileState, usage },
      leaseExpiry(),
    );
    return message;
  };

  events.push({ type: 'turn_start', sessionId: session.sessionId, turnId });
  log.info('turn started', { messageCount: session.messageCount });
  const abort = new AbortController();
  // Long tool calls write no messages for a while; keep the lease alive between writes.
  const heartbeat = setInterval(() => {
    deps.sessions.updateUnderLease(session.sessionId, owner, {}, leaseExpiry()).catch((err: unknown) => {
      log.error('lost the session lease; stopping the turn', { error: errorMessage(err) });
      abort.abort();
    });
  }, Math.max(1_000, Math.floor(deps.config.turn.leaseMs / 3)));
  try {
    const log0 = await deps.messages.loadFrom(session.sessionId, 0);
    const dangling = danglingToolUses(log0);
    if (dangling.length > 0) {
      log.warn('repairing dangling tool_use blocks', { toolUseIds: dangling });
      const repaired = await append('synthetic', 'user', syntheticResults(dangling));
      log0.push(repaired);
    }
    const prompt = await append('prompt', 'user', [{ type: 'text', text: run.prompt }]);
    log0.push(prompt);

    const loop = query({
      client: deps.model,
      model: deps.config.model.name,
      maxTokens: deps.config.model.maxTokens,
      system: buildSystemPrompt(),
      messages: toApiMessages(log0),
      registry: deps.tools,
      toolContext: { sessionId: session.sessionId, turnId, workspace, signal: abort.signal, log },
      maxTurns: deps.config.turn.maxModelCalls,
      signal: abort.signal,
    });
    for await (const event of loop) {
      switch (event.type) {
        case 'text_delta':
          events.push(event);
          break;
        case 'assistant': {
          const { response } = event;
          turnUsage.inputTokens += response.usage.inputTokens;
          turnUsage.outputTokens += response.usage.outputTokens;
          usage.inputTokens += response.usage.inputTokens;
          usage.outputTokens += response.usage.outputTokens;
          const stored = await append('assistant', 'assistant', response.content as ContentBlockParam[], {
            model: response.model,
            stopReason: response.stopReason,
            usage: { inputTokens: response.usage.inputTokens, outputTokens: response.usage.outputTokens },
          });
          events.push({ type: 'assistant_message', seq: stored.seq, content: response.content, stopReason: response.stopReason, usage: { ...turnUsage } });
          for (const block of response.content) {
            if (block.type === 'tool_use') events.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
          }
          break;
        }
        case 'tool_result': {
          const stored = await append('tool_result', 'user', [event.block]);
          events.push({
            type: 'tool_result', seq: stored.seq, toolUseId: event.block.tool_use_id, toolName: event.toolName,
            isError: event.block.is_error === true, content: event.block.content,
          });
          break;
        }
        case 'done':
          stopReason = event.stopReason;
          error = event.error;
          break;
      }
    }
  } catch (err) {
    abort.abort();
    stopReason = 'internal_error';
    error = errorMessage(err);
    log.error('turn failed', { error, stack: err instanceof Error ? err.stack : undefined });
  } finally {
    clearInterval(heartbeat);
  }

  const summary: TurnSummary = {
    turnId, stopReason, startedAt: new Date(run.startedAt).toISOString(), endedAt: new Date(deps.clock()).toISOString(),
    ...(error ? { error } : {}),
  };
  try {
    await deps.sessions.releaseLease(session.sessionId, owner, {
      status: stopReason === 'internal_error' ? 'failed' : 'idle',
      lastTurn: summary,
      turnCount: session.turnCount + 1,
      messageCount: nextSeq,
      workspace: workspace.workspace,
      cwd: workspace.cwd,
      fileState: workspace.fileState,
      usage,
    });
  } catch (err) {
    log.error('could not release the session lease; it will expire', { error: errorMessage(err) });
  }
  log.info('turn ended', { stopReason, error, usage: turnUsage });
  events.push({ type: 'turn_end', turnId, stopReason, usage: turnUsage, ...(error ? { error } : {}) });
  events.close();
  return summary;
}
