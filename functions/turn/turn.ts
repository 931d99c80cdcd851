import { ConflictError, errorMessage, SessionBusyError } from '../shared/errors.ts';
import { awaitsPerson, type Lease, type SessionRecord, type TurnSummary } from '../stores/session-store.ts';
import { sessionWorkspace } from '../agent/session-workspace.ts';
import type { WorkspaceSession } from '../runner-client/workspace-session.ts';
import type { ContinueTurnEvent } from '../deps/continuation.ts';
import { endTurnIfDead, reapDeadLease } from './crashed-turn.ts';
import { turnEventsUrl } from './follow-turn.ts';
import { AwaitingPermissionError } from './resume.ts';
import { waitsForPerson } from '../stores/approval-store.ts';
import { BudgetExceededError, checkBudgets } from '../agent/budget.ts';
import { budgetsFor, INTERRUPT_MESSAGE, INTERRUPT_MESSAGE_FOR_TOOL_USE, TurnStop } from '../agent/turn-stop.ts';
import type { TurnDeps } from '../agent/turn-deps.ts';
import { TurnFeed } from '../agent/turn-feed.ts';
import { handOffLease, startHeartbeat, turnLease } from '../agent/turn-lease.ts';
import { runTurnLoop } from './turn-loop.ts';
import { loadSessionContext, type LoadedContext } from '../context/session-context.ts';
import { TurnRecorder, type TurnOutcome } from '../agent/turn-recorder.ts';
import type { StartTurnOptions, TurnRun } from './turn-run.ts';
import { traced } from '../shared/tracing.ts';

export interface TurnHandle {
  sessionId: string;
  turnId: string;
  /** Numbered events, live in this process and stored in the event log. */
  events: TurnFeed;
  /** Resolves when this invocation's part of the turn is over (ended, or handed to a continuation). */
  done: Promise<TurnSummary>;
}

/**
 * Starts one stateless turn: frees the session first if the turn holding it died (missed
 * heartbeats), takes the session's lease (409 if a live turn holds it), then runs in the
 * background — reload, repair, query loop — writing every message the moment it exists.
 * Callers stream `events` or await `done`; neither is needed for the turn to finish.
 */
export async function startTurn(deps: TurnDeps, opts: StartTurnOptions): Promise<TurnHandle> {
  const { session, turnId, now, lease, preloaded } = await admitTurn(deps, opts, { resume: opts.resume === true, preload: true });
  const log = deps.log.child({ sessionId: opts.sessionId, turnId, tenantId: opts.tenantId });
  const events = new TurnFeed(deps.events, opts.sessionId, turnId, log);
  const done = runTurn(deps, {
    session,
    turnId,
    owner: lease.owner,
    opts,
    events,
    log,
    startedAt: now,
    deadlineAt: opts.deadlineAt ?? simulatedDeadline(deps, now),
    modelCallsBefore: 0,
    continuation: false,
    ...(preloaded ? { preloaded } : {}),
  });
  return { sessionId: opts.sessionId, turnId, events, done };
}

/**
 * Starts a turn that runs in another invocation (`Prefer: respond-async`): the lease is taken
 * here (409 as for any turn), handed at once to a continuation that runs the whole turn, and the
 * turn id is known before anything runs. On Lambda the request's own invocation ends with its
 * response, so the work cannot stay in it; locally the continuation goes through the same
 * Lambda Invoke API.
 */
export async function startTurnAsync(deps: TurnDeps, opts: StartTurnOptions & { prompt: string }): Promise<{ sessionId: string; turnId: string }> {
  // An asynchronous turn always starts from a prompt: calls waiting for answers refuse it.
  const { turnId, now, lease } = await admitTurn(deps, opts, { resume: false, preload: false });
  const handoffOwner = `continuation/${turnId}/start`;
  try {
    await deps.sessions.handOffLease(opts.sessionId, lease.owner, handOffLease(deps, handoffOwner, turnId, now, deps.clock()), {});
    await deps.continuations.schedule({
      kind: 'continue_turn',
      sessionId: opts.sessionId,
      turnId,
      handoffOwner,
      nextEventSeq: 0,
      modelCalls: 0,
      startedAt: now,
      ...(opts.settings ? { settings: opts.settings } : {}),
      start: { prompt: opts.prompt },
    });
  } catch (err) {
    // Nothing ran: give the session back (held by the hand-off owner, or still by us if the hand-off failed).
    const release = (owner: string) => deps.sessions.releaseLease(opts.sessionId, owner, { status: 'idle' });
    await release(handoffOwner)
      .catch(() => release(lease.owner))
      .catch((releaseErr: unknown) => {
        deps.log.error('could not release the lease of an asynchronous turn that never started; it will expire', {
          sessionId: opts.sessionId,
          turnId,
          error: errorMessage(releaseErr),
        });
      });
    throw err;
  }
  return { sessionId: opts.sessionId, turnId };
}

/**
 * What every start of a turn does before it runs: free the session if the turn holding it died,
 * refuse a prompt while calls wait for answers (or a resume with none waiting), refuse when the
 * session-wide budgets are already spent (before anything is written: fail-closed), then take
 * the session's lease (409 if a live turn holds it).
 */
async function admitTurn(
  deps: TurnDeps,
  opts: StartTurnOptions,
  how: { resume: boolean; preload: boolean },
): Promise<{ session: SessionRecord; turnId: string; now: number; lease: Lease; preloaded?: Promise<LoadedContext> }> {
  const { resume } = how;
  const current = await deps.sessions.getForTenant(opts.sessionId, opts.tenantId);
  await reapDeadLease(deps, current);
  const preload = how.preload && !current.lease ? preloadWhileFree(deps, current) : undefined;
  const waiting = await deps.approvals.listForSession(opts.sessionId);
  if (!resume && waiting.length > 0)
    throw new AwaitingPermissionError(
      opts.sessionId,
      waiting.filter(waitsForPerson).map((w) => w.toolUseId),
    );
  if (resume && waiting.length === 0) throw new ConflictError(`Session ${opts.sessionId} has no tool calls waiting for answers.`, 'nothing_to_resume');
  const turnId = deps.newId('turn');
  const now = deps.clock();
  const exceeded = checkBudgets(
    budgetsFor(deps.config, opts.tenantId, current),
    { modelCallsThisTurn: 0, turns: current.turnCount, usage: current.usage, wallSecondsThisTurn: 0 },
    'turn_start',
  );
  if (exceeded) throw new BudgetExceededError(exceeded);
  const lease = turnLease(deps, turnId, now, now);
  const untaken = preload && (await deps.sessions.acquireLeaseIfUntaken(opts.sessionId, lease, now, current));
  if (untaken) return { session: untaken, turnId, now, lease, preloaded: preload };
  const session = await deps.sessions.acquireLease(opts.sessionId, lease, now);
  return { session, turnId, now, lease };
}

/**
 * The conversation read while the session is free, beside the checks and the lease write that
 * follow (docs/turns.md, "The first request of a turn"); it is used only if the lease is then
 * taken with no lease taken in between (acquireLeaseIfUntaken), else read again under the lease.
 * The tenant's ownership is checked before it starts. A failed read is left to the loop's own.
 */
function preloadWhileFree(deps: TurnDeps, current: SessionRecord): Promise<LoadedContext> {
  const loading = loadSessionContext(deps, current);
  loading.catch(() => undefined);
  return loading;
}

/**
 * Carries on a turn that checkpointed near its invocation's deadline. Only the exact hand-off
 * qualifies: a duplicate or late delivery finds the lease taken and does nothing.
 */
export async function continueTurn(deps: TurnDeps, event: ContinueTurnEvent, deadlineAt?: number): Promise<TurnSummary | undefined> {
  const now = deps.clock();
  const lease = turnLease(deps, event.turnId, event.startedAt, now);
  const log = deps.log.child({ sessionId: event.sessionId, turnId: event.turnId });
  let session: SessionRecord;
  try {
    session = await deps.sessions.takeOverLease(event.sessionId, event.handoffOwner, lease, now);
  } catch (err) {
    if (err instanceof SessionBusyError) {
      // A duplicate delivery while the turn lives changes nothing; a redrive of an invocation that
      // died after taking over (Runtime.ExitError) ends the dead turn `crashed` now, not at the next reader.
      const ended = await endTurnIfDead(deps, event.sessionId, event.turnId);
      log.warn(ended ? 'continuation already taken over; the turn has ended' : 'continuation already taken over; ignoring a duplicate delivery');
      return undefined;
    }
    throw err;
  }
  log.info(event.start ? 'asynchronous turn starts' : 'turn continues in a new invocation', { nextEventSeq: event.nextEventSeq, modelCalls: event.modelCalls });
  const events = new TurnFeed(deps.events, event.sessionId, event.turnId, log, event.nextEventSeq);
  return runTurn(deps, {
    session,
    turnId: event.turnId,
    owner: lease.owner,
    events,
    log,
    startedAt: event.startedAt,
    opts: {
      sessionId: event.sessionId,
      tenantId: session.tenantId,
      ...(event.settings ? { settings: event.settings } : {}),
      ...(event.start ? { prompt: event.start.prompt } : {}),
    },
    deadlineAt: deadlineAt ?? simulatedDeadline(deps, now),
    modelCallsBefore: event.modelCalls,
    continuation: event.start === undefined,
  });
}

/** Where the platform gives no deadline (the local stack), an optional simulated one. */
function simulatedDeadline(deps: Pick<TurnDeps, 'config'>, now: number): number | undefined {
  const budget = deps.config.turn.invocationBudgetMs;
  return budget === undefined ? undefined : now + budget;
}

/**
 * One invocation's part of a turn in a `turn` span, the parent of its model calls, tool calls and
 * runner ops; the spans are sent before the invocation ends (a Lambda environment may freeze).
 */
async function runTurn(deps: TurnDeps, run: TurnRun): Promise<TurnSummary> {
  const { session, turnId } = run;
  const attributes = {
    'stratus.session_id': session.sessionId,
    'stratus.turn_id': turnId,
    'stratus.tenant_id': session.tenantId,
    'stratus.turn.continuation': run.continuation,
  };
  try {
    return await traced(deps.tracing, 'turn', attributes, async (span) => {
      const summary = await runLeasedTurn(deps, run);
      span.annotate('stratus.turn.stop_reason', summary.stopReason);
      return summary;
    });
  } finally {
    await deps.tracing.flush().catch((err: unknown) => run.log.warn("could not send the turn's spans", { error: errorMessage(err) }));
  }
}

/** Holds the lease while it beats, runs the loop through the recorder, then ends or hands off. */
async function runLeasedTurn(deps: TurnDeps, run: TurnRun): Promise<TurnSummary> {
  const { session, turnId, owner, events, log } = run;
  const workspace = workspaceOf(deps, session);
  const recorder = recorderOf(deps, run, workspace);
  if (!run.continuation) events.push({ type: 'turn_start', sessionId: session.sessionId, turnId, workspaceVersion: session.workspace.version });
  log.info(run.continuation ? 'turn resumed in a new invocation' : 'turn started', { messageCount: session.messageCount, resume: run.opts.resume === true });
  const abort = new AbortController();
  const stop = turnStopOf(deps, run, abort, recorder);
  // Beats until the lease is released or handed off: also while the last events are stored.
  const heartbeat = startHeartbeat(
    deps,
    session.sessionId,
    owner,
    log,
    () => abort.abort('lease_lost'),
    (now) => {
      stop.onSession(now);
      if (now.lease?.owner === owner) recorder.writer.head.confirm(now.lease);
    },
  );
  let outcome: TurnOutcome;
  try {
    await runTurnLoop(deps, run, recorder, { workspace, signal: abort.signal, stop });
    outcome = withStop(recorder.outcome(), stop);
    if (outcome.stopReason === 'interrupted') {
      // A note for the model: the next turn knows its last response was cut short.
      await recorder.append('synthetic', 'user', [{ type: 'text', text: recorder.endedInToolUse ? INTERRUPT_MESSAGE_FOR_TOOL_USE : INTERRUPT_MESSAGE }]);
    }
    // The last head updates are still on their way: a lease lost meanwhile fails the turn here.
    await recorder.flush();
  } catch (err) {
    abort.abort();
    outcome = { stopReason: 'internal_error', error: errorMessage(err) };
    log.error('turn failed', { error: outcome.error, stack: err instanceof Error ? err.stack : undefined });
  }
  if (outcome.stopReason === 'checkpoint') return handOff(deps, run, recorder, heartbeat.stop);
  return endTurn(deps, run, recorder, outcome, heartbeat.stop);
}

/** The recorder of one run of the turn, which reads the workspace's state when it stores a message. */
function recorderOf(deps: TurnDeps, run: TurnRun, workspace: WorkspaceSession): TurnRecorder {
  const { session, turnId, owner, events, log } = run;
  return new TurnRecorder(deps, {
    session,
    turnId,
    owner,
    events,
    log,
    modelCallsBefore: run.modelCallsBefore,
    startedAt: run.startedAt,
    workspace: () => ({
      workspace: workspace.workspace,
      cwd: workspace.cwd,
      fileState: workspace.fileState,
      attachedInstructions: workspace.attachedInstructions,
      environmentSection: workspace.environmentSection,
    }),
  });
}

/** What stops this run from outside (an interrupt, or a budget the recorder's counts ran out). */
function turnStopOf(deps: TurnDeps, run: TurnRun, abort: AbortController, recorder: TurnRecorder): TurnStop {
  const { session, turnId } = run;
  return new TurnStop(
    abort,
    deps.config,
    { turnId, tenantId: session.tenantId, startedAt: run.startedAt, session },
    () => ({
      modelCallsThisTurn: recorder.modelCalls,
      turns: session.turnCount,
      usage: recorder.usage,
    }),
    deps.clock,
  );
}

/** A loop that ended because it was stopped from outside (aborted, or cut short) ends with the stop's reason. */
function withStop(outcome: TurnOutcome, stop: TurnStop): TurnOutcome {
  const stopped = stop.outcome();
  if (!stopped || awaitsPerson(outcome.stopReason) || outcome.stopReason === 'internal_error') return outcome;
  return stopped;
}

function workspaceOf(deps: TurnDeps, session: SessionRecord): WorkspaceSession {
  return sessionWorkspace(deps, session, { attachedInstructions: session.attachedInstructions });
}

/**
 * turn_end is in the log before the lease goes (a follower finding the session free finds the
 * end too), and reaches live clients after (one that reacts with a new prompt finds it free).
 */
async function endTurn(deps: TurnDeps, run: TurnRun, recorder: TurnRecorder, outcome: TurnOutcome, stopBeating: () => void): Promise<TurnSummary> {
  const { session, turnId, log } = run;
  const { stopReason, error, budget } = outcome;
  const summary: TurnSummary = {
    turnId,
    stopReason,
    startedAt: new Date(run.startedAt).toISOString(),
    endedAt: new Date(deps.clock()).toISOString(),
    ...(error ? { error } : {}),
    ...(budget ? { budget } : {}),
    usage: { ...recorder.turnUsage },
  };
  const status = stopReason === 'internal_error' ? 'failed' : awaitsPerson(stopReason) ? stopReason : 'idle';
  const release = async () => {
    stopBeating();
    // After every head update (a failed turn may have left some queued): the release writes the head last.
    await recorder.writer.settled();
    await releaseLease(deps, run, run.owner, { ...recorder.patch(), status, lastTurn: summary, turnCount: session.turnCount + 1 });
  };
  try {
    await run.events.end(
      {
        type: 'turn_end',
        turnId,
        stopReason,
        usage: recorder.turnUsage,
        ...(error ? { error } : {}),
        ...(budget ? { budget } : {}),
        workspaceVersion: endVersion(recorder, session),
      },
      release,
    );
  } finally {
    // Never beat for a turn that is over: a beating lease would hold the session for good.
    stopBeating();
  }
  log.info('turn ended', { stopReason, error, usage: recorder.turnUsage });
  deps.metrics.emit(
    {
      Turns: { value: 1, unit: 'Count' },
      TurnDuration: { value: deps.clock() - run.startedAt, unit: 'Milliseconds' },
      ModelCalls: { value: recorder.modelCalls, unit: 'Count' },
      InputTokens: { value: recorder.turnUsage.inputTokens, unit: 'Count' },
      OutputTokens: { value: recorder.turnUsage.outputTokens, unit: 'Count' },
      TurnFailed: { value: stopReason === 'internal_error' || stopReason === 'model_error' ? 1 : 0, unit: 'Count' },
    },
    { metadata: { sessionId: session.sessionId, turnId, tenantId: session.tenantId, stopReason } },
  );
  return summary;
}

/** Gives the session back; a failure is logged and the lease expires on its own. */
async function releaseLease(
  deps: Pick<TurnDeps, 'sessions'>,
  run: TurnRun,
  owner: string,
  patch: Parameters<TurnDeps['sessions']['releaseLease']>[2],
): Promise<void> {
  try {
    await deps.sessions.releaseLease(run.session.sessionId, owner, patch);
  } catch (err) {
    run.log.error('could not release the session lease; it will expire', { error: errorMessage(err) });
  }
}

/**
 * Near the deadline: tell clients where to follow, hand the lease to the continuation and ask
 * for a fresh invocation. If that fails, the turn ends here with an error instead (its one
 * turn_end, after turn_continued if that went out), and the session is released so the next
 * prompt can go on.
 */
async function handOff(deps: TurnDeps, run: TurnRun, recorder: TurnRecorder, stopBeating: () => void): Promise<TurnSummary> {
  const { session, turnId, events, log } = run;
  const handoffOwner = `continuation/${turnId}/${recorder.modelCalls}`;
  const startedAt = new Date(run.startedAt).toISOString();
  await recorder.writer.settled();
  const patch = { ...recorder.patch(), ...(recorder.settings ? { settings: recorder.settings } : {}) };
  let owner = run.owner;
  // Nobody beats for a turn in hand-off: only the lease's expiry frees it if the continuation never starts.
  stopBeating();
  try {
    await deps.sessions.handOffLease(session.sessionId, run.owner, handOffLease(deps, handoffOwner, turnId, run.startedAt, deps.clock()), patch);
    owner = handoffOwner;
    events.push({ type: 'turn_continued', turnId, eventsUrl: turnEventsUrl(session.sessionId, turnId) });
    const nextEventSeq = events.nextSeq;
    await events.close();
    await deps.continuations.schedule({
      kind: 'continue_turn',
      sessionId: session.sessionId,
      turnId,
      handoffOwner,
      nextEventSeq,
      modelCalls: recorder.modelCalls,
      startedAt: run.startedAt,
      ...(run.opts.settings ? { settings: run.opts.settings } : {}),
    });
    log.info('turn checkpointed; continuing in a new invocation', { modelCalls: recorder.modelCalls });
    return { turnId, stopReason: 'checkpoint', startedAt, endedAt: new Date(deps.clock()).toISOString() };
  } catch (err) {
    log.error('could not hand the turn to a continuation', { error: errorMessage(err) });
    const error = 'The turn reached its invocation deadline and could not be continued; send another prompt to go on.';
    const summary: TurnSummary = { turnId, stopReason: 'internal_error', startedAt, endedAt: new Date(deps.clock()).toISOString(), error };
    await events.end(
      {
        type: 'turn_end',
        turnId,
        stopReason: 'internal_error',
        usage: { inputTokens: 0, outputTokens: 0 },
        error,
        workspaceVersion: endVersion(recorder, session),
      },
      () => releaseLease(deps, run, owner, { ...patch, status: 'failed', lastTurn: summary, turnCount: session.turnCount + 1 }),
    );
    return summary;
  }
}

/** The workspace version the turn leaves (turn_end carries it, as turn_start carries the one it began from: the per-turn diff). */
function endVersion(recorder: TurnRecorder, session: SessionRecord): number {
  return recorder.patch().workspace?.version ?? session.workspace.version;
}
