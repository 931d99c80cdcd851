import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { Deps } from '../deps/deps.ts';
import { errorMessage, SessionBusyError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { MessageKind, StoredMessage } from '../stores/message-store.ts';
import type { Lease, SessionRecord, TurnSummary } from '../stores/session-store.ts';
import { WorkspaceSession } from '../tools/workspace-session.ts';
import type { ContinueTurnEvent } from './continuation.ts';
import { query, type TurnStopReason } from './query.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import { danglingToolUses, syntheticResults, toApiMessages } from './transcript.ts';
import type { UsageTotals } from './turn-events.ts';
import { TurnFeed } from './turn-feed.ts';

export interface TurnHandle {
  sessionId: string;
  turnId: string;
  /** Numbered events, live in this process and stored in the event log. */
  events: TurnFeed;
  /** Resolves when this invocation's part of the turn is over (ended, or handed to a continuation). */
  done: Promise<TurnSummary>;
}

/** When this invocation must stop working (epoch ms), if the platform sets a deadline. */
export type InvocationDeadline = number | undefined;

/**
 * Starts one stateless turn: takes the session's lease (409 if another turn holds it), then
 * runs in the background — reload, repair, query loop — writing every message the moment it
 * exists. Callers stream `events` or await `done`; neither is needed for the turn to finish.
 */
export async function startTurn(
  deps: Deps,
  opts: { sessionId: string; tenantId: string; prompt: string; deadline?: InvocationDeadline },
): Promise<TurnHandle> {
  await deps.sessions.getForTenant(opts.sessionId, opts.tenantId);
  const turnId = deps.newId('turn');
  const now = deps.clock();
  const lease = leaseFor(deps, turnId, now);
  const session = await deps.sessions.acquireLease(opts.sessionId, lease, now);
  const log = deps.log.child({ sessionId: opts.sessionId, turnId });
  const events = new TurnFeed(deps.events, opts.sessionId, turnId, log);
  const done = runTurn(deps, {
    session, turnId, owner: lease.owner, prompt: opts.prompt, events, log, startedAt: now,
    deadline: opts.deadline ?? simulatedDeadline(deps, now), modelCallsBefore: 0,
  });
  return { sessionId: opts.sessionId, turnId, events, done };
}

/**
 * Carries on a turn that checkpointed near its invocation's deadline. A duplicate delivery of
 * the same continuation finds the lease taken and does nothing.
 */
export async function continueTurn(deps: Deps, event: ContinueTurnEvent, deadline?: InvocationDeadline): Promise<TurnSummary | undefined> {
  const now = deps.clock();
  const lease = leaseFor(deps, event.turnId, now);
  const log = deps.log.child({ sessionId: event.sessionId, turnId: event.turnId });
  let session: SessionRecord;
  try {
    session = await deps.sessions.takeOverLease(event.sessionId, event.handoffOwner, lease, now);
  } catch (err) {
    if (err instanceof SessionBusyError) {
      log.warn('continuation already taken over; ignoring a duplicate delivery');
      return undefined;
    }
    throw err;
  }
  log.info('turn continues in a new invocation', { nextEventSeq: event.nextEventSeq, modelCalls: event.modelCalls });
  const events = new TurnFeed(deps.events, event.sessionId, event.turnId, log, event.nextEventSeq);
  return runTurn(deps, {
    session, turnId: event.turnId, owner: lease.owner, events, log, startedAt: event.startedAt,
    deadline: deadline ?? simulatedDeadline(deps, now), modelCallsBefore: event.modelCalls,
  });
}

function leaseFor(deps: Deps, turnId: string, now: number): Lease {
  return { owner: `${deps.instanceId}/${turnId}`, turnId, expiresAt: now + deps.config.turn.leaseMs };
}

function simulatedDeadline(deps: Deps, now: number): InvocationDeadline {
  const budget = deps.config.turn.invocationBudgetMs;
  return budget === undefined ? undefined : now + budget;
}

interface TurnRun {
  session: SessionRecord;
  turnId: string;
  owner: string;
  /** Absent for a continuation: its prompt is already in the log. */
  prompt?: string;
  events: TurnFeed;
  log: Logger;
  startedAt: number;
  deadline: InvocationDeadline;
  modelCallsBefore: number;
}

async function runTurn(deps: Deps, run: TurnRun): Promise<TurnSummary> {
  const { session, turnId, owner, events, log } = run;
  const usage: UsageTotals = { ...session.usage };
  const turnUsage: UsageTotals = { inputTokens: 0, outputTokens: 0 };
  let nextSeq = session.messageCount;
  let modelCalls = run.modelCallsBefore;
  let stopReason: TurnStopReason | 'internal_error' = 'internal_error';
  let error: string | undefined;
  const workspace = new WorkspaceSession(
    { runner: deps.runner, credentials: deps.workspaceCredentials, bucket: deps.config.bucket },
    session.sessionId,
    session.workspace,
    session.cwd,
  );
  const leaseExpiry = () => deps.clock() + deps.config.turn.leaseMs;
  const sessionPatch = () => ({ messageCount: nextSeq, workspace: workspace.workspace, cwd: workspace.cwd, usage });

  /** Write-ahead: the message is durable before anyone sees it; the head moves with it. */
  const append = async (kind: MessageKind, role: 'user' | 'assistant', content: ContentBlockParam[], extra: Partial<StoredMessage> = {}) => {
    const message: StoredMessage = {
      sessionId: session.sessionId, seq: nextSeq, uuid: deps.newId('msg'), turnId, kind, role, content,
      createdAt: new Date(deps.clock()).toISOString(), ...extra,
    };
    await deps.messages.append(message);
    nextSeq += 1;
    await deps.sessions.updateUnderLease(session.sessionId, owner, sessionPatch(), leaseExpiry());
    return message;
  };

  if (run.prompt !== undefined) events.push({ type: 'turn_start', sessionId: session.sessionId, turnId });
  log.info(run.prompt !== undefined ? 'turn started' : 'turn resumed', { messageCount: session.messageCount });
  const abort = new AbortController();
  // Long tool calls write no messages for a while; keep the lease alive between writes.
  const heartbeat = setInterval(() => {
    deps.sessions.updateUnderLease(session.sessionId, owner, {}, leaseExpiry()).catch((err: unknown) => {
      log.error('lost the session lease; stopping the turn', { error: errorMessage(err) });
      abort.abort();
    });
  }, Math.max(1_000, Math.floor(deps.config.turn.leaseMs / 3)));
  try {
    const history = await deps.messages.loadFrom(session.sessionId, 0);
    // The log, not the session's counter, is the truth: a crash between appending a message and
    // moving the counter leaves the counter one behind.
    nextSeq = Math.max(nextSeq, (history.at(-1)?.seq ?? -1) + 1);
    const dangling = danglingToolUses(history);
    if (dangling.length > 0) {
      log.warn('repairing dangling tool_use blocks', { toolUseIds: dangling });
      history.push(await append('synthetic', 'user', syntheticResults(dangling)));
    }
    if (run.prompt !== undefined) history.push(await append('prompt', 'user', [{ type: 'text', text: run.prompt }]));

    const loop = query({
      client: deps.model,
      model: deps.config.model.name,
      maxTokens: deps.config.model.maxTokens,
      system: buildSystemPrompt(),
      messages: toApiMessages(history),
      registry: deps.tools,
      toolContext: { sessionId: session.sessionId, turnId, workspace, signal: abort.signal, log },
      maxTurns: deps.config.turn.maxModelCalls - run.modelCallsBefore,
      signal: abort.signal,
      shouldCheckpoint: () => run.deadline !== undefined && run.deadline - deps.clock() <= deps.config.turn.checkpointMarginMs,
    });
    for await (const event of loop) {
      switch (event.type) {
        case 'text_delta':
          events.push(event);
          break;
        case 'assistant': {
          const { response } = event;
          modelCalls += 1;
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

  if (stopReason === 'checkpoint') return handOff(deps, run, { modelCalls, patch: sessionPatch() });

  const summary: TurnSummary = {
    turnId, stopReason, startedAt: new Date(run.startedAt).toISOString(), endedAt: new Date(deps.clock()).toISOString(),
    ...(error ? { error } : {}),
  };
  try {
    await deps.sessions.releaseLease(session.sessionId, owner, {
      ...sessionPatch(),
      status: stopReason === 'internal_error' ? 'failed' : 'idle',
      lastTurn: summary,
      turnCount: session.turnCount + 1,
    });
  } catch (err) {
    log.error('could not release the session lease; it will expire', { error: errorMessage(err) });
  }
  log.info('turn ended', { stopReason, error, usage: turnUsage });
  events.push({ type: 'turn_end', turnId, stopReason, usage: turnUsage, ...(error ? { error } : {}) });
  await events.close();
  return summary;
}

/**
 * Near the deadline: tell clients where to follow, hand the lease to the continuation and ask
 * for a fresh invocation. If that fails, the turn ends here with an error instead, and the
 * session is released so the next prompt can go on.
 */
async function handOff(
  deps: Deps,
  run: TurnRun,
  state: { modelCalls: number; patch: Parameters<Deps['sessions']['handOffLease']>[3] },
): Promise<TurnSummary> {
  const { session, turnId, owner, events, log } = run;
  const handoffOwner = `continuation/${turnId}/${state.modelCalls}`;
  const startedAt = new Date(run.startedAt).toISOString();
  let currentOwner = owner;
  try {
    await deps.sessions.handOffLease(session.sessionId, owner, { owner: handoffOwner, turnId, expiresAt: deps.clock() + deps.config.turn.leaseMs }, state.patch);
    currentOwner = handoffOwner;
    events.push({ type: 'turn_continued', turnId, eventsUrl: `/v1/sessions/${session.sessionId}/turns/${turnId}/events` });
    const nextEventSeq = events.nextSeq;
    await events.close();
    await deps.continuations.schedule({
      kind: 'continue_turn', sessionId: session.sessionId, turnId, handoffOwner, nextEventSeq, modelCalls: state.modelCalls, startedAt: run.startedAt,
    });
    log.info('turn checkpointed; continuing in a new invocation', { modelCalls: state.modelCalls });
    return { turnId, stopReason: 'checkpoint', startedAt, endedAt: new Date(deps.clock()).toISOString() };
  } catch (err) {
    log.error('could not hand the turn to a continuation', { error: errorMessage(err) });
    const error = 'The turn reached its invocation deadline and could not be continued; send another prompt to go on.';
    const summary: TurnSummary = { turnId, stopReason: 'internal_error', startedAt, endedAt: new Date(deps.clock()).toISOString(), error };
    await deps.sessions
      .releaseLease(session.sessionId, currentOwner, { ...state.patch, status: 'failed', lastTurn: summary, turnCount: session.turnCount + 1 })
      .catch((e: unknown) => log.error('could not release the session lease; it will expire', { error: errorMessage(e) }));
    const feed = new TurnFeed(deps.events, session.sessionId, turnId, log, events.nextSeq);
    feed.push({ type: 'turn_end', turnId, stopReason: 'internal_error', usage: { inputTokens: 0, outputTokens: 0 }, error });
    await feed.close();
    events.push({ type: 'turn_end', turnId, stopReason: 'internal_error', usage: { inputTokens: 0, outputTokens: 0 }, error });
    await events.close();
    return summary;
  }
}
