import { z } from 'zod';
import type { DeliveryDecision, DeliveryLogRecord } from '../stores/github-delivery-log.ts';
import type { GithubRepoRecord, GithubRunRecord } from '../stores/github-store.ts';

const facts = z.object({
  action: z.string().optional(),
  sender: z.object({ login: z.string() }).optional(),
  issue: z.object({ number: z.number().int() }).optional(),
  pull_request: z.object({ number: z.number().int() }).optional(),
});

/** The log entry of a delivery routed to `repo`'s tenant, as it arrives. */
export function deliveryEntry(
  d: { event: string; deliveryId: string; payload: unknown },
  repo: GithubRepoRecord,
  now: number,
): Omit<DeliveryLogRecord, 'ttl' | 'updatedAt' | 'decision'> {
  const parsed = facts.safeParse(d.payload);
  const p = parsed.success ? parsed.data : {};
  const number = p.issue?.number ?? p.pull_request?.number;
  return {
    deliveryId: d.deliveryId,
    tenantId: repo.tenantId,
    createdAt: new Date(now).toISOString(),
    event: d.event,
    repository: repo.fullName,
    ...(p.action ? { action: p.action } : {}),
    ...(number !== undefined ? { number } : {}),
    ...(p.sender ? { sender: p.sender.login } : {}),
  };
}

const DECISIONS: Record<string, DeliveryDecision> = {
  queued: 'accepted',
  running: 'accepted',
  refused: 'refused',
  rate_limited: 'refused',
  already_running: 'ignored',
  queued_into_run: 'queued',
  failed: 'failed',
};

/** What a run's outcome says was decided about the delivery that started it (an outcome of work done: `ran`). */
export function decisionOf(run: GithubRunRecord): Pick<DeliveryLogRecord, 'decision' | 'runId' | 'outcome'> & Partial<DeliveryLogRecord> {
  const decision = DECISIONS[run.outcome] ?? 'ran';
  return {
    decision,
    runId: run.runId,
    outcome: run.outcome,
    ...(run.sessionId ? { sessionId: run.sessionId } : {}),
    ...(decision !== 'ran' && decision !== 'accepted' && run.detail ? { reason: run.detail.slice(0, 1_000) } : {}),
  };
}
