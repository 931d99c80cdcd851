import type Anthropic from '@anthropic-ai/sdk';
import type { ContextConfig } from '../context/context-manager.ts';
import type { HookDefinition } from '../hooks/types.ts';
import type { PermissionMode, RuleLists } from '../permissions/types.ts';
import type { RunnerClient, WorkspaceCredentialSource } from '../runner-client/runner-client.ts';
import type { IdSource } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import type { ApprovalStore } from '../stores/approval-store.ts';
import type { BlobStore } from '../stores/blob-store.ts';
import type { EventStore } from '../stores/event-store.ts';
import type { MessageStore } from '../stores/message-store.ts';
import type { SessionStore } from '../stores/session-store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ContinuationScheduler } from './continuation.ts';

/** The lease and turn bounds (config `turn`). */
export interface TurnTiming {
  maxModelCalls: number;
  leaseMs: number;
  heartbeatMs: number;
  checkpointMarginMs: number;
  invocationBudgetMs?: number;
}

/** The configuration a turn reads. */
export interface TurnConfig extends ContextConfig {
  bucket: string;
  model: ContextConfig['model'] & { name: string };
  turn: TurnTiming;
  permissions: { defaultMode: PermissionMode; policy?: RuleLists };
  maxToolConcurrency: number;
}

/**
 * What running a turn uses: the stores it writes, the model, the runner (through the workspace
 * session), the continuation scheduler and the tools. The app's `Deps` satisfies it; modules
 * that need less ask for less (`Pick<TurnDeps, ...>` or their own interface).
 */
export interface TurnDeps {
  config: TurnConfig;
  sessions: SessionStore;
  messages: MessageStore;
  events: EventStore;
  approvals: ApprovalStore;
  blobs: BlobStore;
  runner: RunnerClient;
  workspaceCredentials: WorkspaceCredentialSource;
  continuations: ContinuationScheduler;
  model: Anthropic;
  tools: ToolRegistry;
  /** In-process hooks (library use); they run before a session's configured HTTP hooks. */
  hooks?: readonly HookDefinition[];
  clock: () => number;
  newId: IdSource;
  log: Logger;
  /** Identifies this process in leases. */
  instanceId: string;
}
