import type { McpServer, ResourceTemplate as ResourceTemplateType } from '@modelcontextprotocol/sdk/server/mcp.js';
import { keyMessage, keyProblem } from '../../../sandbox-runner/common/file-keys.ts';
import { exportTranscript } from '../../session/session-ops.ts';
import { LimitError, UserError } from '../../shared/errors.ts';
import { getObjectStream, runWorkspaceOp } from '../../workspaces/workspace-ops.ts';
import type { RemoteDeps } from '../remote/remote-sessions.ts';

/** A file resource larger than this is refused (GET …/workspace/files/{path} serves any size). */
export const MAX_FILE_RESOURCE_BYTES = 5 * 1024 * 1024;

/** How many of the tenant's newest sessions `resources/list` names. */
const LISTED_SESSIONS = 20;

/**
 * Resources: a session's transcript (Claude Code's JSONL, as GET …/transcript.jsonl) and any
 * file of its workspace. `ResourceTemplate` is passed in: the SDK is loaded on first use only.
 */
export function registerMcpResources(server: McpServer, deps: RemoteDeps, tenantOf: () => string, ResourceTemplate: typeof ResourceTemplateType): void {
  const transcripts = new ResourceTemplate('stratus://sessions/{sessionId}/transcript', {
    list: async () => {
      const page = await deps.sessions.listForTenant(tenantOf(), { limit: LISTED_SESSIONS });
      return {
        resources: page.sessions.map((s) => ({
          uri: `stratus://sessions/${s.sessionId}/transcript`,
          name: `${s.title ?? s.sessionId} transcript`,
          mimeType: 'application/jsonl',
        })),
      };
    },
  });
  server.registerResource(
    'transcript',
    transcripts,
    { description: "A session's transcript, one JSON message a line", mimeType: 'application/jsonl' },
    async (uri, vars) => {
      const record = await deps.sessions.getForTenant(String(vars.sessionId), tenantOf());
      const text = await exportTranscript(deps, { sessionId: record.sessionId, tenantId: record.tenantId, cwd: record.cwd });
      return { contents: [{ uri: uri.href, mimeType: 'application/jsonl', text }] };
    },
  );
  const files = new ResourceTemplate('stratus://sessions/{sessionId}/files/{+path}', { list: undefined });
  server.registerResource('file', files, { description: "A file of a session's workspace (text, or base64 for binary)" }, async (uri, vars) => {
    const record = await deps.sessions.getForTenant(String(vars.sessionId), tenantOf());
    const bytes = await fileBytes(deps, record, String(vars.path));
    const text = new TextDecoder('utf-8', { fatal: true });
    try {
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: text.decode(bytes) }] };
    } catch {
      return { contents: [{ uri: uri.href, mimeType: 'application/octet-stream', blob: Buffer.from(bytes).toString('base64') }] };
    }
  });
}

async function fileBytes(deps: RemoteDeps, record: Parameters<typeof runWorkspaceOp>[1], path: string): Promise<Uint8Array> {
  const problem = keyProblem(path);
  if (problem) throw new UserError(keyMessage(path, problem));
  const result = await runWorkspaceOp(deps, record, { type: 'export_file', path });
  if (result.size > MAX_FILE_RESOURCE_BYTES) {
    throw new LimitError(
      `${path} is ${result.size} bytes; a file resource holds at most ${MAX_FILE_RESOURCE_BYTES} (GET /v1/sessions/${record.sessionId}/workspace/files/${path} serves it whole).`,
      'resource_too_large',
    );
  }
  return new Uint8Array(await new Response(await getObjectStream(deps, record.workspace.id, result.key)).arrayBuffer());
}
