import { denialSummary } from '../permissions/denial-tracking.ts';
import type { StoredMessage } from '../stores/message-store.ts';
import { leaseIsDead, type SessionRecord } from '../stores/session-store.ts';

/** The public shape of a session: no lease internals, no tenant id. */
export function sessionView(record: SessionRecord, now: number) {
  const running = record.lease !== undefined && !leaseIsDead(record.lease, now);
  return {
    id: record.sessionId,
    title: record.title ?? null,
    // Readers free a dead holder's session first (idle, last turn `crashed`); 'interrupted' is
    // what a dead lease that nobody could free yet looks like. The next turn repairs the log.
    status: running ? 'running' : record.status === 'running' ? 'interrupted' : record.status,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    messageCount: record.messageCount,
    turnCount: record.turnCount,
    cwd: record.cwd,
    workspace: { id: record.workspace.id, version: record.workspace.version },
    usage: record.usage,
    currentTurnId: running ? record.lease!.turnId : null,
    lastTurn: record.lastTurn ?? null,
    permissions: {
      mode: record.settings?.permissionMode ?? null,
      unattended: record.settings?.unattended === true,
      hooks: (record.settings?.hooks ?? []).map((h) => ({ event: h.event, matcher: h.matcher ?? null, url: h.url, failMode: h.failMode })),
      denials: denialSummary(record.denials),
    },
    reloadFromSeq: record.reloadFromSeq ?? null,
    source: record.source ?? null,
  };
}

export function messageView(message: StoredMessage) {
  return {
    seq: message.seq,
    id: message.uuid,
    turnId: message.turnId,
    kind: message.kind,
    role: message.role,
    content: message.content,
    createdAt: message.createdAt,
    ...(message.stopReason !== undefined ? { stopReason: message.stopReason } : {}),
    ...(message.usage ? { usage: message.usage } : {}),
  };
}
