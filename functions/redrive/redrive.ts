import type { Deps } from '../deps/deps.ts';
import { ConflictError, NotFoundError } from '../shared/errors.ts';
import type { HeldFailure } from '../stores/failed-invocations.ts';
import { HOLD_SECONDS } from './failure-listing.ts';

type RedriveDeps = Pick<Deps, 'failedInvocations' | 'asyncInvoke' | 'config' | 'clock'>;

/** Receives one redrive makes at most (of 10 records each). */
const MAX_RECEIVES = 20;

/**
 * Sends one failed invocation's event again, to the function it failed in, as an asynchronous
 * invocation; the record is removed only once Lambda accepted the invocation, so a redrive that
 * fails to send keeps it. Only the harness's own asynchronous functions are invoked.
 */
export async function redriveOne(deps: RedriveDeps, id: string): Promise<{ id: string; functionName: string }> {
  const held: HeldFailure[] = [];
  try {
    for (let i = 0; i < MAX_RECEIVES; i++) {
      const batch = await deps.failedInvocations.receive(10, HOLD_SECONDS);
      if (batch.length === 0) break;
      held.push(...batch);
      const found = batch.find((f) => f.id === id);
      if (found) {
        const refusal = whyNotRedrivable(deps, found);
        if (refusal) throw new ConflictError(`Failed invocation ${id} cannot be sent again: ${refusal}.`, 'not_redrivable');
        await send(deps, found);
        held.splice(held.indexOf(found), 1);
        return { id, functionName: found.functionName };
      }
    }
    throw new NotFoundError(`No failed invocation ${JSON.stringify(id.slice(0, 64))}; GET /v1/admin/async-failures lists them.`);
  } finally {
    await deps.failedInvocations.release(held.map((h) => h.receipt));
  }
}

export interface RedriveAllResult {
  redriven: { id: string; functionName: string }[];
  /** Records left in the queue, with why: not redrivable, or the invocation was refused. */
  kept: { id: string; reason: string }[];
  /** True when the call stopped at its bound with records still unread: call again. */
  more: boolean;
}

/**
 * Sends every failed invocation recorded before the call started again (one that fails anew
 * during the call is a new record, left for the next look), removing each one Lambda accepted.
 */
export async function redriveAll(deps: RedriveDeps): Promise<RedriveAllResult> {
  const startedAt = new Date(deps.clock()).toISOString();
  const result: RedriveAllResult = { redriven: [], kept: [], more: true };
  const held: string[] = [];
  try {
    for (let i = 0; i < MAX_RECEIVES; i++) {
      const batch = await deps.failedInvocations.receive(10, HOLD_SECONDS);
      if (batch.length === 0) return { ...result, more: false };
      for (const failure of batch) await redriveHeld(deps, failure, startedAt, result, held);
    }
    return result;
  } finally {
    await deps.failedInvocations.release(held);
  }
}

async function redriveHeld(deps: RedriveDeps, failure: HeldFailure, startedAt: string, result: RedriveAllResult, held: string[]): Promise<void> {
  if (failure.failedAt > startedAt) return void held.push(failure.receipt);
  const refusal = whyNotRedrivable(deps, failure);
  if (refusal) {
    held.push(failure.receipt);
    return void result.kept.push({ id: failure.id, reason: refusal });
  }
  try {
    await send(deps, failure);
    result.redriven.push({ id: failure.id, functionName: failure.functionName });
  } catch (err) {
    held.push(failure.receipt);
    result.kept.push({ id: failure.id, reason: `the invocation was refused: ${err instanceof Error ? err.message : String(err)}` });
  }
}

async function send(deps: RedriveDeps, failure: HeldFailure): Promise<void> {
  await deps.asyncInvoke(failure.functionName, failure.event);
  await deps.failedInvocations.remove(failure.receipt);
}

function whyNotRedrivable(deps: Pick<Deps, 'config'>, failure: HeldFailure): string | undefined {
  if (failure.event === undefined) return 'its record has no event (Lambda leaves out an event too large for the queue)';
  const own = [deps.config.selfFunction, deps.config.github.workerFunction].filter(Boolean);
  if (!own.includes(failure.functionName)) return `${failure.functionName} is not one of this deployment's asynchronous functions (${own.join(', ')})`;
  return undefined;
}
