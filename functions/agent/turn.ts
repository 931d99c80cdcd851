import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { Deps } from '../deps/deps.ts';
import { recordDenial, type DenialCounts } from '../permissions/denial-tracking.ts';
import { rulesFromLists } from '../permissions/rule-syntax.ts';
import { hooksFor, permissionContextFor, ruleToRemember, withRememberedRule, type SessionSettings, type TurnSettings } from '../permissions/session-settings.ts';
import { errorMessage, StratusError } from '../shared/errors.ts';
import { EventFeed } from '../shared/event-feed.ts';
import type { Logger } from '../shared/logger.ts';
import type { PendingApproval } from '../stores/approval-store.ts';
import type { MessageKind, StoredMessage } from '../stores/message-store.ts';
import type { SessionRecord, TurnSummary } from '../stores/session-store.ts';
import { assembleToolPool } from '../tools/registry.ts';
import type { UserDecision } from '../tools/run-tool-use.ts';
import { WorkspaceSession } from '../tools/workspace-session.ts';
import { query, type QueryParams, type TurnStopReason } from './query.ts';
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
  /** Epoch ms by which the turn must have ended (a Lambda's deadline); the loop stops before it. */
  deadlineAt?: number;
}

/** Stop calling the model when less than this remains before the deadline. */
export const DEADLINE_MARGIN_MS = 30_000;

/**
 * Starts one stateless turn: takes the session's lease (409 if another turn holds it), then
 * runs in the background — reload, repair, query loop — writing every message the moment it
 * exists. Callers stream `events` or await `done`; neither is needed for the turn to finish.
 */
export async function startTurn(deps: Deps, opts: StartTurnOptions): Promise<TurnHandle> {
  await deps.sessions.getForTenant(opts.sessionId, opts.tenantId);
  const waiting = await deps.approvals.listForSession(opts.sessionId);
  if (!opts.resume && waiting.length > 0) throw new AwaitingPermissionError(opts.sessionId, waiting.filter((w) => w.kind === 'ask').map((w) => w.toolUseId));
  if (opts.resume && waiting.length === 0) throw new StratusError(`Session ${opts.sessionId} has no tool calls waiting for answers.`, 409, 'nothing_to_resume');
  const turnId = deps.newId('turn');
  const now = deps.clock();
  const lease = { owner: `${deps.instanceId}/${turnId}`, turnId, expiresAt: now + deps.config.turn.leaseMs };
  const session = await deps.sessions.acquireLease(opts.sessionId, lease, now);
  const events = new EventFeed<TurnEvent>();
  const log = deps.log.child({ sessionId: opts.sessionId, turnId });
  const done = runTurn(deps, { session, turnId, owner: lease.owner, opts, events, log, startedAt: now });
  return { sessionId: opts.sessionId, turnId, events, done };
}

interface TurnRun {
  session: SessionRecord;
  turnId: string;
  owner: string;
  opts: StartTurnOptions;
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
  let settings: SessionSettings | undefined = session.settings;
  let denials: DenialCounts = { ...session.denials };
  let pendingOrder = 0;
  const workspace = new WorkspaceSession(
    { runner: deps.runner, credentials: deps.workspaceCredentials, bucket: deps.config.bucket },
    session.sessionId,
    session.workspace,
    session.cwd,
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
      { messageCount: nextSeq, workspace: workspace.workspace, cwd: workspace.cwd, usage, denials },
      leaseExpiry(),
    );
    return message;
  };

  const waitFor = async (kind: PendingApproval['kind'], toolUseId: string, toolName: string, input: unknown, message?: string) => {
    await deps.approvals.put({
      sessionId: session.sessionId, toolUseId, turnId, order: pendingOrder++, toolName, input, kind,
      ...(message ? { message } : {}), createdAt: new Date(deps.clock()).toISOString(),
    });
  };

  events.push({ type: 'turn_start', sessionId: session.sessionId, turnId });
  log.info('turn started', { messageCount: session.messageCount, resume: run.opts.resume === true });
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
    const deadlineAt = run.opts.deadlineAt;
    const loop = query({
      client: deps.model,
      model: deps.config.model.name,
      maxTokens: deps.config.model.maxTokens,
      system: buildSystemPrompt(),
      messages: toApiMessages(log0),
      registry: assembleToolPool({ builtins: deps.tools.tools, rules: permissions.rules }),
      toolContext: { sessionId: session.sessionId, turnId, workspace, signal: abort.signal, log },
      permissions,
      hooks: [...(deps.hooks ?? []), ...hooksFor(settings)],
      maxToolConcurrency: deps.config.maxToolConcurrency,
      maxTurns: deps.config.turn.maxModelCalls,
      signal: abort.signal,
      shouldStop: deadlineAt === undefined ? undefined : () => deps.clock() >= deadlineAt - DEADLINE_MARGIN_MS,
      resume,
    });
    for await (const event of loop) {
      switch (event.type) {
        case 'text_delta':
        case 'tool_progress':
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
  } finally {
    clearInterval(heartbeat);
  }

  const summary: TurnSummary = {
    turnId, stopReason, startedAt: new Date(run.startedAt).toISOString(), endedAt: new Date(deps.clock()).toISOString(),
    ...(error ? { error } : {}),
  };
  try {
    await deps.sessions.releaseLease(session.sessionId, owner, {
      status: stopReason === 'internal_error' ? 'failed' : stopReason === 'awaiting_permission' ? 'awaiting_permission' : 'idle',
      lastTurn: summary,
      turnCount: session.turnCount + 1,
      messageCount: nextSeq,
      workspace: workspace.workspace,
      cwd: workspace.cwd,
      usage,
      denials,
    });
  } catch (err) {
    log.error('could not release the session lease; it will expire', { error: errorMessage(err) });
  }
  log.info('turn ended', { stopReason, error, usage: turnUsage });
  events.push({ type: 'turn_end', turnId, stopReason, usage: turnUsage, ...(error ? { error } : {}) });
  events.close();
  return summary;
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
