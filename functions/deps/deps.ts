import type { Context } from 'aws-lambda';
import type { ModelClient } from '../model/model-client.ts';
import type { S3Client } from '@aws-sdk/client-s3';
import type { StorageCredentials } from '../../sandbox-runner/protocol.ts';
import type { RunnerClient, WorkspaceCredentialSource } from '../runner-client/runner-client.ts';
import type { PurgeCredentialSource } from '../runner-client/purge-credentials.ts';
import type { HookDefinition } from '../hooks/types.ts';
import type { IdSource } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import type { Metrics } from '../shared/metrics.ts';
import type { Tracing } from '../shared/tracing.ts';
import type { EventStore } from '../stores/event-store.ts';
import type { ApprovalStore } from '../stores/approval-store.ts';
import type { BackgroundAgentStore } from '../stores/background-agent-store.ts';
import type { BlobStore } from '../stores/blob-store.ts';
import type { MessageStore } from '../stores/message-store.ts';
import type { IdempotencyStore } from '../stores/idempotency-store.ts';
import type { ScheduleBackend, ScheduleStore } from '../stores/schedule-store.ts';
import type { SessionStore } from '../stores/session-store.ts';
import type { TokenStore } from '../stores/token-store.ts';
import type { TenantUsageStore } from '../stores/tenant-usage.ts';
import type { RunnerCallSlots } from '../stores/runner-call-slots.ts';
import type { TenantSettingsStore } from '../stores/tenant-settings-store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { McpClients } from '../tools/mcp/mcp-clients.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { GithubClientFactory } from '../github-api/github-client.ts';
import type { GithubStore } from '../stores/github-store.ts';
import type { GithubItemStore } from '../stores/github-item-store.ts';
import type { GithubInstallationStore } from '../stores/github-installation-store.ts';
import type { GithubDeliveryLog } from '../stores/github-delivery-log.ts';
import type { GithubItemRateStore } from '../stores/github-item-rates.ts';
import type { SteerStore } from '../stores/steer-store.ts';
import type { ContinuationScheduler } from './continuation.ts';
import type { QuestionTimers } from './question-timers.ts';
import type { AsyncInvoke } from './async-invoke.ts';
import type { FailedInvocationStore } from '../stores/failed-invocations.ts';
import type { GithubDispatcher } from './github-dispatch.ts';
import type { StratusConfig } from './config.ts';
import type { SessionSchedules } from '../tools/tool.ts';

/**
 * The deps a function asks for (its first parameter). A module names what it uses itself
 * (`Pick<Deps, ...>`) and adds `DepsOf<typeof f>` for each function it passes its deps on to.
 */
export type DepsOf<F extends (deps: never, ...rest: never[]) => unknown> = F extends (deps: infer D, ...rest: never[]) => unknown ? D : never;

/**
 * Everything the app needs, built once per home (Lambda container, local process). Only the
 * composition roots (functions/handlers, the local stack) hold all of it; every other module
 * asks for the part it uses. This file imports types only from the layers below it.
 */
export interface Deps {
  config: StratusConfig;
  sessions: SessionStore;
  messages: MessageStore;
  events: EventStore;
  schedules: ScheduleStore;
  scheduleBackend: ScheduleBackend;
  /** A session's agent-made schedules (the Cron tools), over `schedules` and `scheduleBackend`. */
  agentSchedules: (session: { sessionId: string; tenantId: string }) => SessionSchedules;
  /** Tool calls waiting for a person's answer (durable ask). */
  approvals: ApprovalStore;
  /** Fires a question's timeout when its time runs out (functions/deps/question-timers.ts). */
  questionTimers: QuestionTimers;
  /** Background sub-agents' leases, spend and outcomes (their messages are their logs). */
  backgroundAgents: BackgroundAgentStore;
  /** Idempotency keys of creating POSTs and their first responses. */
  idempotency: IdempotencyStore;
  /** Tenant API tokens made through the admin routes (hashed). */
  tokens: TokenStore;
  /** Bytes each tenant stores, against the storage quota. */
  tenantUsage: TenantUsageStore;
  /** Each tenant's sandbox runner calls in flight, against STRATUS_TENANT_RUNNER_CALLS. */
  runnerSlots: RunnerCallSlots;
  /** What each tenant sets for all of its sessions (instructions, system prompt text). */
  tenantSettings: TenantSettingsStore;
  /** Harness-side S3 objects: persisted tool results, spilled message payloads. */
  blobs: BlobStore;
  runner: RunnerClient;
  /** The one policy of every call made on a session's behalf (hooks, MCP): functions/outbound. */
  outbound: OutboundPolicy;
  /** Sessions' remote MCP servers, connected from here (the harness), with their tool lists cached per instance. */
  mcp: McpClients;
  continuations: ContinuationScheduler;
  /** Failed asynchronous invocations (the async-failures queue), for the admin's redrive. */
  failedInvocations: FailedInvocationStore;
  /** Sends an event again to one of the deployment's functions, asynchronously (the redrive). */
  asyncInvoke: AsyncInvoke;
  /** Connected repositories, webhook deliveries, runs and threads of the GitHub integration. */
  github: GithubStore;
  /** GitHub App installations claimed by tenants (who may connect which repositories). */
  githubInstallations: GithubInstallationStore;
  /** What each issue or PR has spent over all its runs (its one budget), and its failing-check fix attempts. */
  githubItems: GithubItemStore;
  /** Runs per issue or pull request per hour, against a repository's rate limit (no ping-pong with another bot). */
  githubItemRates: GithubItemRateStore;
  /** Every delivery routed to a tenant and what was decided about it (`GET /v1/github/deliveries`). */
  githubDeliveryLog: GithubDeliveryLog;
  /** Comments queued for the run working on their issue or pull request: its turns take them before model calls. */
  steers: SteerStore;
  /** Hands an accepted webhook trigger to the GitHub worker (an asynchronous invocation). */
  githubDispatch: GithubDispatcher;
  /** REST clients and git tokens per repository (a GitHub App's installation tokens, or one token). */
  githubClients: GithubClientFactory;
  /**
   * S3 access to one workspace's objects (staging uploads, streaming exports back), always
   * through that workspace's minted credentials: the API's own role has no access to workspaces.
   */
  workspaceStorage: (credentials: StorageCredentials) => Promise<S3Client>;
  workspaceCredentials: WorkspaceCredentialSource;
  /** The only credentials that may list and delete in the bucket: the purge of one deleted session (functions/session/delete-session.ts). */
  purgeCredentials: PurgeCredentialSource;
  model: ModelClient;
  tools: ToolRegistry;
  /** In-process hooks (library use); they run before a session's configured HTTP hooks. */
  hooks?: readonly HookDefinition[];
  clock: () => number;
  newId: IdSource;
  log: Logger;
  /** CloudWatch EMF metrics with the stage and service dimensions, whatever the log level. */
  metrics: Metrics;
  /** Spans of turns, model calls, tool calls and runner ops (X-Ray, OpenTelemetry, or nothing). */
  tracing: Tracing;
  /**
   * Called by a Lambda handler as each invocation starts: logs gain the invocation's context and
   * correlation id, sampling decides afresh, the first invocation counts a ColdStart, traces get
   * their annotations. The local stack never calls it.
   */
  startInvocation(invocation: { context?: Context; correlationId?: string }): void;
  /** Identifies this process in leases. */
  instanceId: string;
}
