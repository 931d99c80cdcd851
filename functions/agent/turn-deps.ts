import type { ContextConfig } from '../context/context-manager.ts';
import type { Deps } from '../deps/deps.ts';
import type { StratusConfig } from '../deps/config.ts';
import type { ToolSearchMode } from '../session-settings/mcp-config.ts';
import type { PriceTable } from '../model/pricing.ts';
import type { ModelProvider } from '../model/model-names.ts';
import type { PermissionMode, RuleLists } from '../permissions/types.ts';
import type { Budgets } from '../stores/budgets.ts';

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
  model: ContextConfig['model'] & { name: string; provider?: ModelProvider; webSearch?: boolean };
  turn: TurnTiming;
  permissions: { defaultMode: PermissionMode; policy?: RuleLists };
  maxToolConcurrency: number;
  toolSearch: { mode: ToolSearchMode };
  /** Instructions files and the system prompt's additions (functions/agent/project-context.ts). */
  projectContext: StratusConfig['projectContext'];
  /** Budgets of sessions that set none (functions/agent/budget.ts). */
  budgets: { defaults: Budgets; tenants: Record<string, Budgets> };
  /** USD per million tokens by model-name prefix (functions/model/pricing.ts). */
  modelPrices: PriceTable;
  /** How sandboxes reach the network, and the set-up steps' registries and time limit (functions/environments/setup-steps.ts). */
  egress: Deps['config']['egress'];
  setup: Deps['config']['setup'];
}

/**
 * What running a turn uses: the stores it writes, the model, the runner (through the workspace
 * session), the continuation scheduler and the tools. The app's `Deps` satisfies it; modules
 * that need less ask for less (`Pick<TurnDeps, ...>` or their own interface).
 */
export type TurnDeps = Pick<
  Deps,
  | 'sessions'
  | 'messages'
  | 'events'
  | 'approvals'
  | 'questionTimers'
  | 'backgroundAgents'
  | 'blobs'
  | 'runner'
  | 'workspaceCredentials'
  | 'continuations'
  | 'model'
  | 'tools'
  | 'hooks'
  | 'outbound'
  | 'clock'
  | 'newId'
  | 'log'
  | 'metrics'
  | 'tracing'
  | 'instanceId'
  | 'workspaceStorage'
  | 'tenantUsage'
  | 'tenantSettings'
> &
  Partial<Pick<Deps, 'mcp' | 'steers' | 'agentSchedules'>> & { config: TurnConfig };
