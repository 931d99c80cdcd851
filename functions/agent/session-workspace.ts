import { WorkspaceSession } from '../runner-client/workspace-session.ts';
import { putStopMarker } from '../runner-client/stop-marker.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import type { TurnDeps } from './turn-deps.ts';

/**
 * A run's view of the session's workspace, as the session record leaves it: version, cwd,
 * read-file state, network, stop markers, the storage meter and the cached environment layer.
 * A turn and a background agent each get their own (a racing write gets the usual version
 * conflict); the turn adds the subdirectory instructions it already attached.
 */
export function sessionWorkspace(deps: TurnDeps, session: SessionRecord, extra: { attachedInstructions?: string[] } = {}): WorkspaceSession {
  return new WorkspaceSession({
    deps,
    sessionId: session.sessionId,
    workspace: session.workspace,
    cwd: session.cwd,
    fileState: session.fileState,
    allowedDomains: session.settings?.allowedDomains,
    ...extra,
    requestStop: (workspaceId, key) => putStopMarker(deps, workspaceId, key),
    storage: { tenantId: session.tenantId, usage: deps.tenantUsage },
    ...(session.environment ? { environment: session.environment } : {}),
  });
}
