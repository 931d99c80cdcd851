import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { createContextManager } from '../context/context-manager.ts';
import { createPersistedResultReader } from '../context/persisted-output.ts';
import { loadSessionContext } from '../context/session-context.ts';
import type { Deps } from '../deps/deps.ts';
import { recordDenial, type DenialCounts } from '../permissions/denial-tracking.ts';
import { rulesFromLists } from '../permissions/rule-syntax.ts';
import { hooksFor, permissionContextFor, ruleToRemember, withRememberedRule, type SessionSettings, type TurnSettings } from '../permissions/session-settings.ts';
import { errorMessage, SessionBusyError, StratusError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { emitMetrics } from '../shared/metrics.ts';
import type { PendingApproval } from '../stores/approval-store.ts';
import type { MessageKind, StoredMessage } from '../stores/message-store.ts';
import type { SessionPatch, SessionRecord, TurnSummary } from '../stores/session-store.ts';
import { assembleToolPool } from '../tools/registry.ts';
import type { UserDecision } from '../tools/run-tool-use.ts';
import { WorkspaceSession } from '../runner-client/workspace-session.ts';
import type { ContinueTurnEvent } from './continuation.ts';
import { reapDeadLease } from './crashed-turn.ts';
import { turnEventsUrl } from './follow-turn.ts';
import { query, type QueryParams, type TurnStopReason } from './query.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import { danglingToolUses, syntheticResults, toApiMessages } from './transcript.ts';
import type { UsageTotals } from './turn-events.ts';
import { TurnFeed } from './turn-feed.ts';
import { handOffLease, startHeartbeat, turnLease } from './turn-lease.ts';

export interface TurnHandle {
  sessionId: string;
  turnId: string;
  /** Numbered events, live in this process and stored in the event log. */
  events: TurnFeed;
  /** Resolves when this invocation's part of the turn is over (ended, or handed to a continuation). */
  done: Promise<TurnSummary>;
}

/** A new prompt while calls still wait for answers would leave them dangling: answer them first. */
export class AwaitingPermissionError extends StratusError {
  constructor(sessionId: string, toolUseIds: string[]) {
    super(
      `Session ${sessionId} is waiting for permission answers (${toolUseIds.join(', ')}); ` +
        `answer each with POST /v1/sessions/${sessionId}/permissions/{toolUseId}.`,
      409,
      'awaiting_permission',
    );
  }
}

export interface StartTurnOptions {
  sessionId: string;
  tenantId: string;
  /** The user's prompt; absent when resuming after permission answers. */
  prompt?: string;
  /** Per-turn permission mode and request rules. */
  settings?: TurnSettings;
  /** Run the calls that waited for answers, then continue the loop. */
  resume?: boolean;
  /**
   * Epoch ms when this invocation must stop (a Lambda's deadline). Near it, the turn checkpoints
   * and continues in a fresh invocation. Without one, the configured simulated budget applies.
   */
  deadlineAt?: number;
}

/**
 * Starts one stateless turn: frees the session first if the turn holding it died (missed
 * heartbeats), takes the session's lease (409 if a live turn holds it), then runs in the
 * background — reload, repair, query loop — writing every message the moment it exists.
 * Callers stream `events` or await `done`; neither is needed for the turn to finish.
 */
export async function startTurn(deps: Deps, opts: StartTurnOptions): Promise<TurnHandle> {
  const current = await deps.sessions.getForTenant(opts.sessionId, opts.tenantId);
  await reapDeadLease(deps, current);
  const waiting = await deps.approvals.listForSession(opts.sessionId);
  if (!opts.resume && waiting.length > 0) throw new AwaitingPermissionError(opts.sessionId, waiting.filter((w) => w.kind === 'ask').map((w) => w.toolUseId));
  if (opts.resume && waiting.length === 0) throw new StratusError(`Session ${opts.sessionId} has no tool calls waiting for answers.`, 409, 'nothing_to_resume');
  const turnId = deps.newId('turn');
  const now = deps.clock();
  const lease = turnLease(deps, turnId, now, now);
  const session = await deps.sessions.acquireLease(opts.sessionId, lease, now);
  const log = deps.log.child({ sessionId: opts.sessionId, turnId });
  const events = new TurnFeed(deps.events, opts.sessionId, turnId, log);
  const done = runTurn(deps, {
    session, turnId, owner: lease.owner, opts, events, log, startedAt: now,
    deadlineAt: opts.deadlineAt ?? simulatedDeadline(deps, now), modelCallsBefore: 0, continuation: false,
  });
  return { sessionId: opts.sessionId, turnId, events, done };
}

/**
 * Carries on a turn that checkpointed near its invocation's deadline. Only the exact hand-off
 * qualifies: a duplicate or late delivery finds the lease taken and does nothing.
 */
export async function continueTurn(deps: Deps, event: ContinueTurnEvent, deadlineAt?: number): Promise<TurnSummary | undefined> {
  const now = deps.clock();
  const lease = turnLease(deps, event.turnId, event.startedAt, now);
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
    opts: { sessionId: event.sessionId, tenantId: session.tenantId, ...(event.settings ? { settings: event.settings } : {}) },
    deadlineAt: deadlineAt ?? simulatedDeadline(deps, now), modelCallsBefore: event.modelCalls, continuation: true,
  });
}

/** Where the platform gives no deadline (the local stack), an optional simulated one. */
function simulatedDeadline(deps: Deps, now: number): number | undefined {
  const budget = deps.config.turn.invocationBudgetMs;
  return budget === undefined ? undefined : now + budget;
}

interface TurnRun {
  session: SessionRecord;
  turnId: string;
  owner: string;
  opts: StartTurnOptions;
  events: TurnFeed;
  log: Logger;
  startedAt: number;
  deadlineAt: number | undefined;
  /** Model calls made by earlier invocations of this turn (the bound spans them). */
  modelCallsBefore: number;
  /** A continuation: no turn_start, no prompt, nothing to resume. */
  continuation: boolean;
}

async function runTurn(deps: Deps, run: TurnRun): Promise<TurnSummary> {
  const { session, turnId, owner, events, log } = run;
  const usage: UsageTotals = { ...session.usage };
  const turnUsage: UsageTotals = { inputTokens: 0, outputTokens: 0 };
  let nextSeq = session.messageCount;
  let modelCalls = run.modelCallsBefore;
  let stopReason: TurnStopReason | 'internal_error' = 'internal_error';
  let error: string | undefined;
  let settings: SessionSettings | undefined = session.settings;
  let denials: DenialCounts = { ...session.denials };
  let pendingOrder = 0;
  const workspace = new WorkspaceSession({
    deps, sessionId: session.sessionId, workspace: session.workspace, cwd: session.cwd, fileState: session.fileState, allowedDomains: session.settings?.allowedDomains,
  });
  const leaseExpiry = () => deps.clock() + deps.config.turn.leaseMs;
  const sessionPatch = (): SessionPatch => ({
    messageCount: nextSeq, workspace: workspace.workspace, cwd: workspace.cwd, fileState: workspace.fileState, usage, denials,
  });

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

  const waitFor = async (kind: PendingApproval['kind'], toolUseId: string, toolName: string, input: unknown, message?: string) => {
    await deps.approvals.put({
      sessionId: session.sessionId, toolUseId, turnId, order: pendingOrder++, toolName, input, kind,
      ...(message ? { message } : {}), createdAt: new Date(deps.clock()).toISOString(),
    });
  };

  if (!run.continuation) events.push({ type: 'turn_start', sessionId: session.sessionId, turnId });
  log.info(run.continuation ? 'turn resumed in a new invocation' : 'turn started', { messageCount: session.messageCount, resume: run.opts.resume === true });
  const abort = new AbortController();
  // Beats until the lease is released or handed off: also while the last events are stored.
  const heartbeat = startHeartbeat(deps, session.sessionId, owner, log, () => abort.abort());
  try {
    // Reload only what follows the last compact boundary, with the replacement decisions.
    const loaded = await loadSessionContext(deps, session);
    const log0 = loaded.conversation;
    // The log, not the session's counter, is the truth: a crash between appending a message and
    // moving the counter leaves the counter one behind.
    nextSeq = Math.max(nextSeq, loaded.lastSeq + 1);
    const context = createContextManager(deps, { session, owner, append, loaded, log });
    let resume: QueryParams['resume'];
    if (run.opts.resume) {
      const prepared = await prepareResume(deps, session.sessionId, log0, settings);
      resume = prepared.resume;
      if (prepared.settings !== settings) {
        settings = prepared.settings;
        await deps.sessions.updateUnderLease(session.sessionId, owner, { settings }, leaseExpiry());
      }
    }
    const waiting = new Set(resume?.blocks.map((b) => b.id) ?? []);
    const dangling = danglingToolUses(log0).filter((id) => !waiting.has(id));
    if (dangling.length > 0) {
      log.warn('repairing dangling tool_use blocks', { toolUseIds: dangling });
      log0.push(await append('synthetic', 'user', syntheticResults(dangling)));
    }
    if (run.opts.prompt !== undefined) log0.push(await append('prompt', 'user', [{ type: 'text', text: run.opts.prompt }]));

    const permissions = permissionContextFor(settings, { defaultMode: deps.config.permissions.defaultMode, policy: deps.config.permissions.policy, turn: run.opts.settings });
    const { deadlineAt } = run;
    const loop = query({
      client: deps.model,
      model: deps.config.model.name,
      maxTokens: deps.config.model.maxTokens,
      system: buildSystemPrompt(),
      messages: toApiMessages(log0),
      registry: assembleToolPool({ builtins: deps.tools.tools, rules: permissions.rules }),
      toolContext: {
        sessionId: session.sessionId, turnId, workspace, signal: abort.signal, log,
        persistedResults: createPersistedResultReader(deps.blobs, session.sessionId),
      },
      permissions,
      hooks: [...(deps.hooks ?? []), ...hooksFor(settings)],
      maxToolConcurrency: deps.config.maxToolConcurrency,
      maxTurns: Math.max(1, deps.config.turn.maxModelCalls - run.modelCallsBefore),
      signal: abort.signal,
      shouldCheckpoint: deadlineAt === undefined ? undefined : () => deadlineAt - deps.clock() <= deps.config.turn.checkpointMarginMs,
      resume,
      context,
      retry: { maxRetries: deps.config.model.maxRetries, baseDelayMs: deps.config.model.retryBaseDelayMs, fallbackModel: deps.config.model.fallbackName },
    });
    for await (const event of loop) {
      switch (event.type) {
        case 'text_delta':
        case 'tool_progress':
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
            usage: { ...response.usage },
            // The replacement decisions this request was sent with: a reload re-applies exactly these.
            decisions: context.takeDecisions(),
          });
          events.push({ type: 'assistant_message', seq: stored.seq, content: response.content, stopReason: response.stopReason, usage: { ...turnUsage } });
          for (const block of response.content) {
            if (block.type === 'tool_use') events.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
          }
          break;
        }
        case 'tool_result': {
          if (event.denied) {
            const tracked = recordDenial(denials, event.toolName);
            denials = tracked.counts;
            events.push({ type: 'permission_denied', toolUseId: event.block.tool_use_id, toolName: event.toolName, count: tracked.count, ...(tracked.suggestion ? { suggestion: tracked.suggestion } : {}) });
          }
          const stored = await append('tool_result', 'user', [event.block, ...event.extra]);
          events.push({
            type: 'tool_result', seq: stored.seq, toolUseId: event.block.tool_use_id, toolName: event.toolName,
            isError: event.block.is_error === true, content: event.block.content,
          });
          break;
        }
        case 'permission_request':
          await waitFor('ask', event.toolUseId, event.toolName, event.input, event.message);
          events.push(event);
          break;
        case 'tool_deferred':
          await waitFor('deferred', event.toolUseId, event.toolName, event.input);
          break;
        // Durable records of a broken stream, retries and the max_tokens resume request.
        case 'tombstone': {
          const stored = await append('tombstone', 'assistant', event.content as ContentBlockParam[], { error: event.error });
          events.push({ type: 'tombstone', seq: stored.seq, error: event.error });
          break;
        }
        case 'retry':
          log.warn('model call failed; retrying', { attempt: event.attempt, delayMs: event.delayMs, status: event.status, error: event.error });
          events.push({ type: 'model_retry', attempt: event.attempt, delayMs: event.delayMs, status: event.status, error: event.error });
          break;
        case 'meta_user':
          await append('synthetic', 'user', [{ type: 'text', text: event.text }]);
          break;
        case 'done':
          stopReason = event.stopReason;
          error = event.error;
          break;
      }
    }
    // Calls can be left waiting even when the turn ended otherwise (a stream that broke mid-way).
    if (pendingOrder > 0 && stopReason !== 'internal_error') stopReason = 'awaiting_permission';
  } catch (err) {
    abort.abort();
    stopReason = 'internal_error';
    error = errorMessage(err);
    log.error('turn failed', { error, stack: err instanceof Error ? err.stack : undefined });
  }

  if (stopReason === 'checkpoint') {
    return handOff(deps, run, { modelCalls, patch: { ...sessionPatch(), ...(settings ? { settings } : {}) }, stopBeating: heartbeat.stop });
  }

  const summary: TurnSummary = {
    turnId, stopReason, startedAt: new Date(run.startedAt).toISOString(), endedAt: new Date(deps.clock()).toISOString(),
    ...(error ? { error } : {}),
  };
  // turn_end is in the log before the lease goes (a follower finding the session free finds the
  // end too), and reaches live clients after (one that reacts with a new prompt finds it free).
  const release = async () => {
    heartbeat.stop();
    try {
      await deps.sessions.releaseLease(session.sessionId, owner, {
        ...sessionPatch(),
        status: stopReason === 'internal_error' ? 'failed' : stopReason === 'awaiting_permission' ? 'awaiting_permission' : 'idle',
        lastTurn: summary,
        turnCount: session.turnCount + 1,
      });
    } catch (err) {
      log.error('could not release the session lease; it will expire', { error: errorMessage(err) });
    }
  };
  try {
    await events.end({ type: 'turn_end', turnId, stopReason, usage: turnUsage, ...(error ? { error } : {}) }, release);
  } finally {
    // Never beat for a turn that is over: a beating lease would hold the session for good.
    heartbeat.stop();
  }
  log.info('turn ended', { stopReason, error, usage: turnUsage });
  emitMetrics(log, {
    TurnDuration: { value: deps.clock() - run.startedAt, unit: 'Milliseconds' },
    ModelCalls: { value: modelCalls, unit: 'Count' },
    InputTokens: { value: turnUsage.inputTokens, unit: 'Count' },
    OutputTokens: { value: turnUsage.outputTokens, unit: 'Count' },
    TurnFailed: { value: stopReason === 'internal_error' || stopReason === 'model_error' ? 1 : 0, unit: 'Count' },
  });
  return summary;
}

/**
 * Near the deadline: tell clients where to follow, hand the lease to the continuation and ask
 * for a fresh invocation. If that fails, the turn ends here with an error instead, and the
 * session is released so the next prompt can go on.
 */
async function handOff(deps: Deps, run: TurnRun, state: { modelCalls: number; patch: SessionPatch; stopBeating: () => void }): Promise<TurnSummary> {
  const { session, turnId, owner, events, log } = run;
  const handoffOwner = `continuation/${turnId}/${state.modelCalls}`;
  const startedAt = new Date(run.startedAt).toISOString();
  let currentOwner = owner;
  // Nobody beats for a turn in hand-off: only the lease's expiry frees it if the continuation never starts.
  state.stopBeating();
  try {
    await deps.sessions.handOffLease(session.sessionId, owner, handOffLease(deps, handoffOwner, turnId, run.startedAt, deps.clock()), state.patch);
    currentOwner = handoffOwner;
    events.push({ type: 'turn_continued', turnId, eventsUrl: turnEventsUrl(session.sessionId, turnId) });
    const nextEventSeq = events.nextSeq;
    await events.close();
    await deps.continuations.schedule({
      kind: 'continue_turn', sessionId: session.sessionId, turnId, handoffOwner, nextEventSeq, modelCalls: state.modelCalls, startedAt: run.startedAt,
      ...(run.opts.settings ? { settings: run.opts.settings } : {}),
    });
    log.info('turn checkpointed; continuing in a new invocation', { modelCalls: state.modelCalls });
    return { turnId, stopReason: 'checkpoint', startedAt, endedAt: new Date(deps.clock()).toISOString() };
  } catch (err) {
    log.error('could not hand the turn to a continuation', { error: errorMessage(err) });
    const error = 'The turn reached its invocation deadline and could not be continued; send another prompt to go on.';
    const summary: TurnSummary = { turnId, stopReason: 'internal_error', startedAt, endedAt: new Date(deps.clock()).toISOString(), error };
    // Stored after turn_continued if that went out (followers of eventsUrl see the end), and before the release.
    await events.end({ type: 'turn_end', turnId, stopReason: 'internal_error', usage: { inputTokens: 0, outputTokens: 0 }, error }, () =>
      deps.sessions
        .releaseLease(session.sessionId, currentOwner, { ...state.patch, status: 'failed', lastTurn: summary, turnCount: session.turnCount + 1 })
        .catch((e: unknown) => log.error('could not release the session lease; it will expire', { error: errorMessage(e) })),
    );
    return summary;
  }
}

/**
 * The calls that waited, with the answers given. Calls whose result is already in the log (a
 * resumed turn that crashed after running them) are skipped. The waiting items are removed
 * now, under the lease: from here on the log is the record, and a crash leaves dangling
 * tool_uses that the next turn repairs. A remembered "allow" becomes a session rule.
 */
async function prepareResume(
  deps: Deps,
  sessionId: string,
  log0: readonly StoredMessage[],
  settings: SessionSettings | undefined,
): Promise<{ resume: NonNullable<QueryParams['resume']>; settings: SessionSettings | undefined }> {
  const pending = await deps.approvals.listForSession(sessionId);
  const undecided = pending.filter((p) => p.kind === 'ask' && p.decision === undefined);
  if (undecided.length > 0) throw new AwaitingPermissionError(sessionId, undecided.map((p) => p.toolUseId));
  const answered = new Set<string>();
  for (const message of log0) for (const block of message.content) if (block.type === 'tool_result') answered.add(block.tool_use_id);
  const decisions = new Map<string, UserDecision>();
  const blocks: NonNullable<QueryParams['resume']>['blocks'] = [];
  let next = settings;
  for (const item of pending) {
    if (answered.has(item.toolUseId)) continue;
    blocks.push({ id: item.toolUseId, name: item.toolName, input: item.input });
    if (item.decision === 'deny') decisions.set(item.toolUseId, { behavior: 'deny' });
    if (item.decision === 'allow') {
      decisions.set(item.toolUseId, { behavior: 'allow', ...(item.updatedInput !== undefined ? { updatedInput: item.updatedInput } : {}) });
      if (item.remember) {
        const rule = ruleToRemember(item.toolName, item.updatedInput ?? item.input);
        if (rulesFromLists({ allow: [rule] }, 'session').invalid.length === 0) next = withRememberedRule(next, rule);
      }
    }
  }
  for (const item of pending) await deps.approvals.remove(sessionId, item.toolUseId);
  return { resume: { blocks, decisions }, settings: next };
}
