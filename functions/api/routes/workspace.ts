import { Hono } from 'hono';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';
import { z } from 'zod';
import { NO_EGRESS } from '../../../sandbox-runner/isolation/egress-mode.ts';
import { DEFAULT_WORKSPACE_LIMITS } from '../../../sandbox-runner/workspace/limits.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { keyMessage, keyProblem } from '../../../sandbox-runner/workspace/file-keys.ts';
import { LimitError, UserError } from '../../shared/errors.ts';
import { deleteObject, getObjectStream, importIntoWorkspace, putUpload, runWorkspaceOp, uploadKey } from '../../workspaces/workspace-ops.ts';
import type { AuthVariables } from '../auth.ts';
import { parseJsonBody } from '../validate.ts';

/** Uploads larger than any workspace may hold are refused before anything is stored. */
export const MAX_ARCHIVE_UPLOAD_BYTES = DEFAULT_WORKSPACE_LIMITS.maxBytes;

const gitBody = z.strictObject({
  url: z.string().min(1).max(2048).describe('https:// clone URL'),
  ref: z.string().min(1).max(255).optional().describe('Branch or tag (default: the remote default branch)'),
  depth: z.number().int().min(0).max(1_000_000).optional().describe('Commits of history; 0 = full clone (default 1)'),
  token: z.string().min(1).max(4096).optional().describe('Access token sent as HTTP basic auth; never stored'),
});

/** What the workspace routes use: sessions, ids and the egress setting, plus the workspace operations' needs. */
type WorkspaceRouteDeps = Pick<Deps, 'sessions' | 'newId' | 'config'> &
  DepsOf<typeof putUpload> &
  DepsOf<typeof importIntoWorkspace> &
  DepsOf<typeof runWorkspaceOp> &
  DepsOf<typeof getObjectStream> &
  DepsOf<typeof deleteObject>;

/**
 * A session's workspace over HTTP:
 *   PUT  /:id/workspace/archive   body: tar.gz → fills an empty workspace
 *   POST /:id/workspace/git       { url, ref?, depth?, token? } → clones into an empty workspace
 *   GET  /:id/workspace/files     every path with type, size, mode
 *   GET  /:id/workspace/files/*   one file's exact bytes
 *   GET  /:id/workspace/archive   the whole workspace as tar.gz
 */
export function workspaceRoutes(deps: WorkspaceRouteDeps) {
  const app = new Hono<{ Variables: AuthVariables }>();
  const session = (id: string, tenantId: string) => deps.sessions.getForTenant(id, tenantId);

  app.put('/:id/workspace/archive', async (c) => {
    const record = await session(c.req.param('id'), c.get('tenantId'));
    const length = Number(c.req.header('content-length'));
    if (!Number.isInteger(length) || length <= 0) {
      throw new UserError('Send the tar.gz as the request body with a Content-Length header.', 'length_required', 411);
    }
    if (length > MAX_ARCHIVE_UPLOAD_BYTES) {
      throw new LimitError(`The archive is ${length} bytes; at most ${MAX_ARCHIVE_UPLOAD_BYTES} bytes are accepted.`, 'workspace_limit');
    }
    const body = c.req.raw.body;
    if (!body) throw new UserError('Send the tar.gz as the request body.', 'length_required', 411);
    const key = uploadKey(record.workspace.id, deps.newId('up'));
    await putUpload(deps, record.workspace.id, key.full, Readable.fromWeb(body as unknown as NodeWebStream), length);
    try {
      const { version, result } = await importIntoWorkspace(deps, record, { type: 'import_archive', key: key.relative });
      return c.json({ workspace: { id: record.workspace.id, version }, files: result.files, bytes: result.bytes, skipped: result.skipped }, 201);
    } finally {
      await deleteObject(deps, record.workspace.id, key.full).catch(() => undefined);
    }
  });

  app.post('/:id/workspace/git', async (c) => {
    const body = await parseJsonBody(c, gitBody);
    const record = await session(c.req.param('id'), c.get('tenantId'));
    if (deps.config.egress === 'none') throw new UserError(NO_EGRESS, 'egress_unavailable');
    const { version, result } = await importIntoWorkspace(deps, record, { type: 'import_git', ...body });
    return c.json({ workspace: { id: record.workspace.id, version }, url: result.url, ref: result.ref ?? null, depth: result.depth }, 201);
  });

  app.get('/:id/workspace/files', async (c) => {
    const record = await session(c.req.param('id'), c.get('tenantId'));
    const result = await runWorkspaceOp(deps, record, { type: 'list_files' });
    return c.json({ workspace: record.workspace, files: result.files });
  });

  app.get('/:id/workspace/files/*', async (c) => {
    const record = await session(c.req.param('id'), c.get('tenantId'));
    const prefix = `/v1/sessions/${record.sessionId}/workspace/files/`;
    const filePath = filePathFromUrl(c.req.path.slice(c.req.path.indexOf(prefix) + prefix.length));
    const result = await runWorkspaceOp(deps, record, { type: 'export_file', path: filePath });
    return new Response(await getObjectStream(deps, record.workspace.id, result.key), {
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(result.size), 'x-content-sha256': result.sha256 },
    });
  });

  app.get('/:id/workspace/archive', async (c) => {
    const record = await session(c.req.param('id'), c.get('tenantId'));
    const result = await runWorkspaceOp(deps, record, { type: 'export_archive' });
    const name = `${record.workspace.id}-v${record.workspace.version}.tar.gz`;
    return new Response(await getObjectStream(deps, record.workspace.id, result.key), {
      headers: { 'content-type': 'application/gzip', 'content-length': String(result.size), 'content-disposition': `attachment; filename="${name}"` },
    });
  });

  return app;
}

/** The relative file path in `…/workspace/files/<path>`, checked with the runner's rules. */
function filePathFromUrl(encoded: string): string {
  let filePath: string;
  try {
    filePath = decodeURIComponent(encoded);
  } catch {
    throw new UserError('The file path in the URL is not valid percent-encoded UTF-8.');
  }
  if (filePath === '') throw new UserError('Name a file after …/workspace/files/; GET …/workspace/files lists them.');
  const problem = keyProblem(filePath);
  if (problem) throw new UserError(keyMessage(filePath, problem));
  return filePath;
}
