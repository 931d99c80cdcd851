import type { ContextConfig } from '../context/context-manager.ts';
import type { Deps } from '../deps/deps.ts';
import type { PermissionMode, RuleLists } from '../permissions/types.ts';

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
export type TurnDeps = Pick<
  Deps,
  | 'sessions' | 'messages' | 'events' | 'approvals' | 'blobs' | 'runner' | 'workspaceCredentials'
  | 'continuations' | 'model' | 'tools' | 'hooks' | 'clock' | 'newId' | 'log' | 'metrics' | 'instanceId'
> & { config: TurnConfig };
