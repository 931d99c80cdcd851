import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { followTurn } from '../../turn/follow-turn.ts';
import { interruptRunning, remoteSession } from '../remote/remote-turns.ts';
import { remoteState } from '../remote/remote-view.ts';
import type { RemoteDeps } from '../remote/remote-sessions.ts';
import { inA2aTerms, streamInA2aTerms } from './a2a-errors.ts';
import { keepGoingFor, streamOfTurn, type A2aCall } from './a2a-follow.ts';
import { pushConfigOf, savePushTarget } from './a2a-push.ts';
import { startFromMessage } from './a2a-send.ts';
import { historyOf, taskOf } from './a2a-task.ts';
import { ConflictError, NotFoundError } from '../../shared/errors.ts';

/** The most tasks one ListTasks page holds. */
const MAX_PAGE = 100;

/**
 * The A2A request handler the SDK's JSON-RPC transport calls: a thin adapter over sessions and
 * turns (a task is a session, each message a turn), built per request for the caller's tenant.
 * It keeps nothing between requests: every answer is read from the stores, so any instance
 * answers any call (a resubscribe follows the stored event log).
 */
export class StratusA2aHandler implements A2ARequestHandler {
  constructor(
    private readonly deps: RemoteDeps,
    private readonly call: A2aCall,
    private readonly card: AgentCard,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    const { ExtendedAgentCardNotConfiguredError } = await import('@a2a-js/sdk/errors');
    throw new ExtendedAgentCardNotConfiguredError('Stratus has one agent card, the public one.');
  }

  /** A message: a new task (session) or the next turn of one; answered once the turn ends, unless `returnImmediately`. */
  sendMessage(params: SendMessageRequest): Promise<Message | Task> {
    return inA2aTerms(this.deps.log, async () => {
      const started = await startFromMessage(this.deps, this.call, params);
      if (started.turn === undefined) return taskOf(this.deps, started.record, { historyLength: params.configuration?.historyLength });
      // Followed as a stream is (steps dropped), so its end is pushed the same way; the task it ends with gets its history.
      const stream = streamOfTurn(this.deps, this.call, started.record.sessionId, started.turn);
      let next = await stream.next();
      while (!next.done) next = await stream.next();
      const record = await remoteSession(this.deps, started.record.sessionId, this.call.tenantId);
      return { ...next.value, history: await historyOf(this.deps, record, params.configuration?.historyLength) };
    });
  }

  /** As sendMessage, streamed: the task first, then its steps, artifacts and final status. */
  sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse> {
    const { deps, call } = this;
    return streamInA2aTerms(deps.log, async function* () {
      const started = await startFromMessage(deps, call, params);
      yield { payload: { $case: 'task', value: await taskOf(deps, started.record, { historyLength: 0 }) } };
      if (started.turn) yield* streamOfTurn(deps, call, started.record.sessionId, started.turn);
    });
  }

  /** Follows the task's running turn through its stored event log (from its start), wherever that turn runs. */
  resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse> {
    const { deps, call } = this;
    return streamInA2aTerms(deps.log, async function* () {
      const record = await remoteSession(deps, params.id, call.tenantId);
      const state = remoteState(record, deps.clock());
      if (state === 'completed' || state === 'failed' || state === 'canceled')
        throw new ConflictError(`Task ${record.sessionId} is ${state}: there is nothing to subscribe to (GetTask reads it).`, 'task_ended');
      yield { payload: { $case: 'task', value: await taskOf(deps, record, { historyLength: 0 }) } };
      const turnId = record.lease?.turnId;
      if (state !== 'working' || !turnId) return;
      // The turn runs elsewhere: whoever ends it pushes its end.
      const events = followTurn(deps, record.sessionId, turnId, -1, keepGoingFor(call));
      yield* streamOfTurn(deps, call, record.sessionId, { events, endsHere: Promise.resolve(false) });
    });
  }

  getTask(params: GetTaskRequest): Promise<Task> {
    return inA2aTerms(this.deps.log, async () =>
      taskOf(this.deps, await remoteSession(this.deps, params.id, this.call.tenantId), { historyLength: params.historyLength }),
    );
  }

  /** Interrupts the running turn (its commands are killed); TaskNotCancelable when none runs. */
  cancelTask(params: CancelTaskRequest): Promise<Task> {
    return inA2aTerms(this.deps.log, async () => {
      await interruptRunning(this.deps, params.id, this.call.tenantId);
      return taskOf(this.deps, await remoteSession(this.deps, params.id, this.call.tenantId));
    });
  }

  /** The tenant's tasks (sessions), newest activity first, without their history. */
  listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    return inA2aTerms(this.deps.log, async () => {
      const limit = Math.min(Math.max(params.pageSize ?? 50, 1), MAX_PAGE);
      const page = await this.deps.sessions.listForTenant(this.call.tenantId, {
        limit,
        order: 'activity',
        ...(params.pageToken ? { cursor: params.pageToken } : {}),
      });
      const tasks = await Promise.all(page.sessions.map((s) => taskOf(this.deps, s, { historyLength: params.historyLength ?? 0 })));
      // The sessions table keeps no count per tenant: totalSize is what this page holds.
      return { tasks, nextPageToken: page.nextCursor ?? '', pageSize: limit, totalSize: tasks.length };
    });
  }

  createTaskPushNotificationConfig(params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    return inA2aTerms(this.deps.log, async () => {
      const record = await remoteSession(this.deps, params.taskId, this.call.tenantId);
      return pushConfigOf(record.sessionId, await savePushTarget(this.deps, record, params));
    });
  }

  getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest): Promise<TaskPushNotificationConfig> {
    return inA2aTerms(this.deps.log, async () => {
      const record = await remoteSession(this.deps, params.taskId, this.call.tenantId);
      const target = (record.pushNotifications ?? []).find((t) => t.id === params.id);
      if (!target) throw new NotFoundError(`Task ${record.sessionId} has no push notification config ${params.id}.`);
      return pushConfigOf(record.sessionId, target);
    });
  }

  listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest): Promise<ListTaskPushNotificationConfigsResponse> {
    return inA2aTerms(this.deps.log, async () => {
      const record = await remoteSession(this.deps, params.taskId, this.call.tenantId);
      return { configs: (record.pushNotifications ?? []).map((t) => pushConfigOf(record.sessionId, t)), nextPageToken: '' };
    });
  }

  deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    return inA2aTerms(this.deps.log, async () => {
      const record = await remoteSession(this.deps, params.taskId, this.call.tenantId);
      const kept = (record.pushNotifications ?? []).filter((t) => t.id !== params.id);
      if (kept.length === (record.pushNotifications ?? []).length)
        throw new NotFoundError(`Task ${record.sessionId} has no push notification config ${params.id}.`);
      await this.deps.sessions.setPushNotifications(record.sessionId, kept);
    });
  }
}
