import type { TurnSettings } from '../session-settings/session-settings.ts';
import type { Logger } from '../shared/logger.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import type { TurnFeed } from '../agent/turn-feed.ts';
import type { LoadedContext } from '../context/session-context.ts';

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

/** One invocation's part of a turn, as `runTurn` gets it from `startTurn` or `continueTurn`. */
export interface TurnRun {
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
  /** The conversation, read beside the lease write while the session was free (admitTurn); absent: the loop reads it. */
  preloaded?: Promise<LoadedContext>;
}
