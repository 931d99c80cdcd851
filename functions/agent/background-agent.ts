import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { runTodoList } from '../tools/todo-write-tool.ts';
import { toApiMessages } from '../context/transcript.ts';
import { createPersistedResultReader } from '../context/persisted-output.ts';
import type { RunSubagentEvent } from '../deps/continuation.ts';
import { costUsd } from '../model/pricing.ts';
import { sessionWorkspace } from './session-workspace.ts';
import { errorMessage } from '../shared/errors.ts';
import type { BackgroundAgentRecord } from '../stores/background-agent-store.ts';
import { addUsage, type UsageRecord } from '../stores/budgets.ts';
import type { Lease, SessionRecord } from '../stores/session-store.ts';
import type { ToolContext } from '../tools/tool.ts';
import { budgetMessage, checkBudgets, type BudgetExceeded } from './budget.ts';
import { agentControls, sessionAgents, sessionMcpTools, sessionToolPool } from './agent-driver.ts';
import { loadRepositoryControls } from './repository-settings-load.ts';
import type { DriveOutcome } from './subagent-log.ts';
import { definedAgent, drive, finishedOutcome, openChildLog, startingMessages, type ChildSetup, type SubagentScope } from './subagent-runner.ts';
import type { TurnDeps } from './turn-deps.ts';
import { loadProjectContext } from './project-context.ts';
import { beatAt, startHeartbeat } from './turn-lease.ts';
import { budgetsFor } from './turn-stop.ts';
import { createSessionWeb } from './session-web.ts';
import { createSideModel } from './side-model.ts';

/**
 * A background sub-agent's own invocation: a turn of its own on the engine. It takes the
 * agent's lease (one instance at a time; a duplicate delivery finds it held or finished and does
 * nothing), beats, continues the agent's log from wherever it is (the prompt written at launch,
 * or everything a killed process stored: dangling calls repaired, replacement decisions
 * reloaded), and ends by storing its outcome; the parent hears of it through a notification
 * (background-notifications.ts). Near the invocation's deadline it hands itself to a fresh one.
 */
export async function runBackgroundAgent(deps: TurnDeps, event: RunSubagentEvent, deadlineAt?: number): Promise<void> {
  const id = event.agentLogId;
  const log = deps.log.child({ sessionId: event.sessionId, agentLogId: id });
  const record = await deps.backgroundAgents.get(id);
  if (record?.status !== 'running' || record.parentSessionId !== event.sessionId) return;
  const session = await deps.sessions.get(record.parentSessionId);
  if (!session || session.deletedAt !== undefined) return log.info('background sub-agent not run: its session is gone');
  const owner = `${deps.instanceId}/${record.agentId}`;
  const now = deps.clock();
  const beat = beatAt(deps, now);
  const lease: Lease = { owner, turnId: record.agentId, startedAt: record.startedAt, expiresAt: beat.expiresAt, heartbeatAt: beat.at, staleAt: beat.staleAt };
  const held = await deps.backgroundAgents.acquire(id, lease, now);
  if (!held) return log.info('background sub-agent already running elsewhere or finished; nothing to do');
  const abort = new AbortController();
  // The lease sits in the sessions table under the agent's id: the turn's heartbeat works on it as it is.
  const heartbeat = startHeartbeat(deps, id, owner, log, () => abort.abort('lease_lost'));
  try {
    await runHeld(deps, { record: held, session, owner, log, signal: abort.signal, deadlineAt });
  } catch (err) {
    log.error('background sub-agent failed', { error: errorMessage(err) });
    const result = { content: [], totalTokens: 0, durationMs: deps.clock() - held.startedAt, error: errorMessage(err) };
    const recorded = await finish(deps, held, owner, 'failed', result).then(
      () => true,
      () => false,
    );
    // Not even its failure could be stored (the store is unreachable): fail the invocation, so it
    // is kept with the async failures and a redrive goes on from the log once the store is back.
    if (!recorded) throw err;
  } finally {
    heartbeat.stop();
  }
}

interface Held {
  record: BackgroundAgentRecord;
  session: SessionRecord;
  owner: string;
  log: ReturnType<TurnDeps['log']['child']>;
  signal: AbortSignal;
  deadlineAt: number | undefined;
}

async function runHeld(deps: TurnDeps, held: Held): Promise<void> {
  const { record, owner, log } = held;
  let session = held.session;
  const settings = session.settings;
  const agents = sessionAgents(settings);
  const agent = agents.find((a) => a.agentType === record.agentType);
  if (!agent) throw new Error(`Agent type '${record.agentType}' is no longer available in this session.`);
  const ctx = toolContext(deps, session, record, held);
  // Its repository's settings as the workspace stands when this invocation starts; notes go to the log only (nobody streams it).
  const controls = agentControls(deps, settings, undefined, (await loadRepositoryControls(ctx.workspace, log)).controls);
  // The session's tools as its turns get them (its MCP servers', its rules, its ToolSearch mode); the agent's filters apply after.
  const { registry: pool } = sessionToolPool(deps, settings, await sessionMcpTools(deps, session.sessionId, settings, log), controls.permissions);
  const spend = { modelCalls: record.modelCalls, usage: { ...record.usage }, toolUses: record.toolUses };
  let budgetStop: string | undefined;
  // Read from the workspace version this invocation starts on, as a turn does at its start.
  const project = await loadProjectContext(deps, session, ctx.workspace, record.startedAt);
  const scope: SubagentScope = {
    deps,
    session,
    turnId: record.agentId,
    owner,
    log,
    controls,
    project,
    recorder: {
      countSubagentCall: async (response) => {
        const cost = costUsd(deps.config.modelPrices, response.model, response.usage);
        spend.modelCalls += 1;
        addUsage(spend.usage, { ...response.usage, costUsd: cost });
        spend.toolUses += response.content.filter((b) => b.type === 'tool_use').length;
        await deps.backgroundAgents.recordSpend(record.sessionId, owner, spend);
        // The session's own spend moves with its turns: read it again for the next budget check.
        session = (await deps.sessions.get(session.sessionId)) ?? session;
        return cost;
      },
    },
    beforeModelCall: () => {
      const stop = backgroundBudgetStop(deps, session, record, spend, held.signal);
      if (stop && typeof stop !== 'string') budgetStop = budgetMessage(stop);
      return stop === undefined ? undefined : typeof stop === 'string' ? stop : 'budget_exceeded';
    },
  };
  const setup = definedAgent(scope, { pool, agents, isForkChild: false }, agent, '', true);
  const outcome = await runFromLog(deps, held, scope, setup, {
    ...ctx,
    web: createSessionWeb(deps, settings),
    sideModel: spendingSideModel(deps, held, spend),
  });
  await settle(deps, held, outcome, budgetStop);
}

/** Its tools' model requests (WebFetch, WebSearch): they count into its own spend, as its calls do. */
function spendingSideModel(deps: TurnDeps, held: Held, spend: { modelCalls: number; usage: UsageRecord; toolUses: number }) {
  return createSideModel(deps, async (response) => {
    addUsage(spend.usage, { ...response.usage, costUsd: costUsd(deps.config.modelPrices, response.model, response.usage) });
    await deps.backgroundAgents.recordSpend(held.record.sessionId, held.owner, spend);
  });
}

/** Runs the agent on from where its log stands, with its tools' context; one whose log already ends in its answer is not run again. */
async function runFromLog(deps: TurnDeps, held: Held, scope: SubagentScope, setup: ChildSetup, ctx: ToolContext): Promise<DriveOutcome> {
  const { record, log } = held;
  const childLog = await openChildLog(scope, record.sessionId);
  let messages = await startingMessages(childLog, setup);
  const sent = await deps.backgroundAgents.waitingMessages(record.sessionId);
  if (sent.length > 0) {
    // Messages sent while no invocation ran it (SendMessage): the prompt it goes on from.
    childLog.loaded.conversation.push(
      await childLog.append(
        'prompt',
        'user',
        sent.map((text) => ({ type: 'text' as const, text })),
      ),
    );
    await deps.backgroundAgents.dropMessages(record.sessionId, held.owner, sent.length);
    messages = toApiMessages(childLog.loaded.conversation);
  }
  log.info('background sub-agent runs', { agentType: record.agentType, resumed: childLog.loaded.conversation.length > 1, messages: messages.length });
  const margin = deps.config.turn.checkpointMarginMs;
  return (
    finishedOutcome(childLog.loaded.conversation) ??
    (await drive(scope, setup, {
      kind: 'background',
      messages,
      ctx,
      log,
      append: childLog.append,
      loaded: childLog.loaded,
      progress: (event: Record<string, unknown>) => logProgress(log, event),
      takeMessages: () => takeSentMessages(deps, held),
      ...(held.deadlineAt !== undefined ? { shouldCheckpoint: () => held.deadlineAt! - deps.clock() <= margin } : {}),
    }))
  );
}

/** Messages sent to it while it runs, for its next model call (they join its log as user text). */
async function takeSentMessages(deps: TurnDeps, held: Held): Promise<{ texts: string[]; delivered: () => Promise<void> }> {
  const texts = await deps.backgroundAgents.waitingMessages(held.record.sessionId);
  return { texts, delivered: () => deps.backgroundAgents.dropMessages(held.record.sessionId, held.owner, texts.length) };
}

/** Its end: handed to the next invocation, left to the one that took its lease, or its outcome stored. */
async function settle(deps: TurnDeps, held: Held, outcome: DriveOutcome, budgetStop: string | undefined): Promise<void> {
  const { record, owner, log } = held;
  if (outcome.stopReason === 'checkpoint') return handOff(deps, record, owner, log);
  if (held.signal.aborted && held.signal.reason === 'lease_lost') return log.warn('background sub-agent lost its lease; another invocation goes on');
  const failed = outcome.stopReason !== 'end_turn';
  const error = failed ? (outcome.error ?? budgetStop ?? `it stopped (${outcome.stopReason})`) : undefined;
  try {
    await finish(deps, record, owner, failed ? 'failed' : 'completed', {
      content: outcome.text,
      totalTokens: outcome.totalTokens,
      durationMs: deps.clock() - record.startedAt,
      ...(error ? { error } : {}),
    });
  } catch (err) {
    // A message came after its last model call: it goes on (in a fresh invocation) to answer it.
    if (!(err instanceof ConditionalCheckFailedException) || !(await deps.backgroundAgents.get(record.sessionId))?.pendingMessages?.length) throw err;
    return handOff(deps, record, owner, log);
  }
  log.info('background sub-agent finished', { stopReason: outcome.stopReason });
}

/** Its tools' context: its own copy of the session's workspace (a racing write gets the usual version conflict). */
function toolContext(deps: TurnDeps, session: SessionRecord, record: BackgroundAgentRecord, held: Held): ToolContext {
  const workspace = sessionWorkspace(deps, session);
  return {
    sessionId: session.sessionId,
    turnId: record.agentId,
    toolUseId: record.toolUseId,
    workspace,
    signal: held.signal,
    log: held.log,
    persistedResults: createPersistedResultReader(deps.blobs, session.sessionId),
    // Its own list for its run, as a foreground sub-agent's; the session's list is the main agent's.
    todos: runTodoList(),
  };
}

/** The parent session's budgets, with this agent's spend on top of the session's (a turn of its own: its calls and wall clock count like a turn's). */
function backgroundBudgetStop(
  deps: TurnDeps,
  session: SessionRecord,
  record: BackgroundAgentRecord,
  spend: { modelCalls: number; usage: UsageRecord },
  signal: AbortSignal,
): 'aborted' | BudgetExceeded | undefined {
  if (signal.aborted) return 'aborted';
  if (session.deletedAt !== undefined) return 'aborted';
  const usage = { ...session.usage };
  addUsage(usage, spend.usage);
  return checkBudgets(
    budgetsFor(deps.config, session.tenantId, session),
    {
      modelCallsThisTurn: spend.modelCalls,
      turns: 0,
      usage,
      wallSecondsThisTurn: Math.floor((deps.clock() - record.startedAt) / 1000),
    },
    'model_call',
  );
}

async function finish(
  deps: TurnDeps,
  record: BackgroundAgentRecord,
  owner: string,
  status: 'completed' | 'failed',
  result: NonNullable<BackgroundAgentRecord['result']>,
): Promise<void> {
  await deps.backgroundAgents.finish(record.sessionId, owner, status, result);
}

/** Near the deadline: give the lease up and ask for the next invocation, which goes on from the log. */
async function handOff(deps: TurnDeps, record: BackgroundAgentRecord, owner: string, log: Held['log']): Promise<void> {
  await deps.backgroundAgents.release(record.sessionId, owner);
  await deps.continuations.schedule({ kind: 'run_subagent', sessionId: record.parentSessionId, agentLogId: record.sessionId });
  log.info('background sub-agent continues in a new invocation');
}

/** Nobody streams a background agent's progress (its log is the record): kept at debug level. */
function logProgress(log: Held['log'], event: Record<string, unknown>): void {
  if (event.type === 'assistant_message' || event.type === 'tool_result') log.debug('background sub-agent progress', { type: event.type, seq: event.seq });
}
