import type { SessionRecord } from '../stores/session-store.ts';
import { budgetMessage, checkBudgets, effectiveBudgets, type BudgetExceeded, type Budgets, type BudgetSpend } from './budget.ts';

/** The texts of the user message that follows an interrupted response (docs/turns.md, "Stopping a turn"). */
export const INTERRUPT_MESSAGE = '[Request interrupted by user]';
export const INTERRUPT_MESSAGE_FOR_TOOL_USE = '[Request interrupted by user for tool use]';

/** Why a turn was stopped from outside its loop: an interrupt, or a budget that ran out. */
export type StopCause = { stopReason: 'interrupted' } | BudgetExceeded;

/** The budgets config a turn reads: the cap everyone gets, defaults for every tenant and per tenant. */
export interface BudgetConfig {
  turn: { maxModelCalls: number };
  budgets: { defaults: Budgets; tenants: Record<string, Budgets> };
}

/**
 * A running turn's stop: the first cause wins and aborts the turn's signal (the loop checks it
 * between model events and tool calls; running tools follow their interruptBehavior). Budgets
 * are checked before each model call and, for the wall clock, at each heartbeat; the session
 * record each beat returns brings a stop asked for this turn and budgets changed by PATCH.
 */
export class TurnStop {
  private stopCause: StopCause | undefined;
  private budgets: Budgets;

  constructor(
    private readonly abort: AbortController,
    private readonly config: BudgetConfig,
    private readonly turn: { turnId: string; tenantId: string; startedAt: number; session: SessionRecord },
    private readonly spend: () => Omit<BudgetSpend, 'wallSecondsThisTurn'>,
    private readonly clock: () => number,
  ) {
    this.budgets = this.budgetsOf(turn.session);
    this.onSession(turn.session);
  }

  get cause(): StopCause | undefined {
    return this.stopCause;
  }

  /** The budgets in force for this turn (refreshed at each beat). */
  get current(): Budgets {
    return this.budgets;
  }

  stop(cause: StopCause): void {
    if (this.stopCause) return;
    this.stopCause = cause;
    this.abort.abort(cause.stopReason);
  }

  /** What the session record says now (at the start, at each beat). */
  onSession(session: SessionRecord): void {
    const request = session.interruptRequest;
    if (request && (request.turnId === this.turn.turnId || request.turnId === '*')) this.stop({ stopReason: 'interrupted' });
    this.budgets = this.budgetsOf(session);
    const exceeded = checkBudgets({ maxWallSecondsPerTurn: this.budgets.maxWallSecondsPerTurn }, this.spendNow(), 'model_call');
    if (exceeded) this.stop(exceeded);
  }

  /** Before each model call: a budget that ran out ends the turn instead. */
  beforeModelCall(): 'budget_exceeded' | undefined {
    const exceeded = checkBudgets(this.budgets, this.spendNow(), 'model_call');
    if (!exceeded) return undefined;
    // Not an abort: nothing is running between two model calls, so the loop just ends here.
    this.stopCause ??= exceeded;
    return 'budget_exceeded';
  }

  /** The turn_end fields for a turn whose loop ended because of this stop. */
  outcome(): { stopReason: 'interrupted' | 'budget_exceeded'; error?: string; budget?: BudgetExceeded['budget'] } | undefined {
    const cause = this.stopCause;
    if (!cause) return undefined;
    if (cause.stopReason === 'interrupted') return { stopReason: 'interrupted', error: 'The turn was interrupted.' };
    return { stopReason: 'budget_exceeded', error: budgetMessage(cause), budget: cause.budget };
  }

  private spendNow(): BudgetSpend {
    return { ...this.spend(), wallSecondsThisTurn: (this.clock() - this.turn.startedAt) / 1000 };
  }

  private budgetsOf(session: SessionRecord): Budgets {
    return budgetsFor(this.config, this.turn.tenantId, session);
  }
}

/** The budgets in force for a session: its own, over its tenant's, over everyone's, over the configured model-call cap. */
export function budgetsFor(config: BudgetConfig, tenantId: string, session: Pick<SessionRecord, 'budgets'>): Budgets {
  return effectiveBudgets({ maxModelCallsPerTurn: config.turn.maxModelCalls }, config.budgets.defaults, config.budgets.tenants[tenantId], session.budgets);
}
