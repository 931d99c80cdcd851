import { createRoute, z, type RouteHandler } from '@hono/zod-openapi';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';
import { gitImportRefusal } from '../../../sandbox-runner/common/egress-mode.ts';
import { DEFAULT_WORKSPACE_LIMITS } from '../../../sandbox-runner/common/workspace-limits.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { keyMessage, keyProblem } from '../../../sandbox-runner/common/file-keys.ts';
import { LimitError, UserError } from '../../shared/errors.ts';
import { getObjectStream, importIntoWorkspace, putUpload, runWorkspaceOp, uploadKey, withStagedArchive } from '../../workspaces/workspace-ops.ts';
import { bodyLimit } from '../body-limit.ts';
import { createRouteApp, jsonBodyLimit, untypedResponse, type ApiEnv } from '../route-app.ts';
import type { SessionRecord } from '../../stores/session-store.ts';
import { errorResponses, idempotencyKeyHeader, json, sessionIdParam } from '../schemas/common.ts';

/** Uploads larger than any workspace may hold are refused before anything is stored. */
export const MAX_ARCHIVE_UPLOAD_BYTES = DEFAULT_WORKSPACE_LIMITS.maxBytes;

export const archiveTooLarge = (bytes: number) =>
  new LimitError(`The archive is ${bytes} bytes; at most ${MAX_ARCHIVE_UPLOAD_BYTES} bytes are accepted.`, 'workspace_limit');

const gitBody = z
  .strictObject({
    url: z.string().min(1).max(2048).describe('https:// clone URL'),
    ref: z.string().min(1).max(255).optional().describe('Branch or tag (default: the remote default branch)'),
    depth: z.number().int().min(0).max(1_000_000).optional().describe('Commits of history; 0 = full clone (default 1)'),
    token: z.string().min(1).max(4096).optional().describe('Access token sent as HTTP basic auth; never stored'),
  })
  .openapi('GitImport');

const workspaceRef = z.object({ id: z.string(), version: z.number().int() });
const fileInfoSchema = z
  .object({
    path: z.string(),
    type: z.enum(['file', 'dir', 'symlink']),
    size: z.number().int().optional(),
    mode: z.number().int().optional(),
    target: z.string().optional(),
  })
  .openapi('WorkspaceFile');
const tags = ['Workspace'];

const putArchive = createRoute({
  method: 'put',
  path: '/{id}/workspace/archive',
  tags,
  summary: 'Fill an empty workspace from a tar.gz',
  description: `The body is the archive, with a Content-Length (at most ${MAX_ARCHIVE_UPLOAD_BYTES} bytes).`,
  middleware: [bodyLimit(MAX_ARCHIVE_UPLOAD_BYTES, archiveTooLarge)] as const,
  request: { params: sessionIdParam, body: { content: { 'application/gzip': { schema: z.string().openapi({ format: 'binary' }) } }, required: true } },
  responses: {
    201: json(z.object({ workspace: workspaceRef, files: z.number().int(), bytes: z.number().int(), skipped: z.number().int() }), 'What was imported'),
    ...errorResponses(400, 404, 409, 411, 413, 429),
  },
});
const gitImport = createRoute({
  method: 'post',
  path: '/{id}/workspace/git',
  tags,
  summary: 'Fill an empty workspace with a git clone',
  middleware: [jsonBodyLimit(64 * 1024)] as const,
  request: { params: sessionIdParam, headers: idempotencyKeyHeader, body: { content: { 'application/json': { schema: gitBody } }, required: true } },
  responses: {
    201: json(z.object({ workspace: workspaceRef, url: z.string(), ref: z.string().nullable(), depth: z.number().int() }), 'What was cloned'),
    ...errorResponses(400, 404, 409, 413, 415, 422, 429),
  },
});
const listFiles = createRoute({
  method: 'get',
  path: '/{id}/workspace/files',
  tags,
  summary: 'Every path of the workspace',
  request: { params: sessionIdParam },
  responses: { 200: json(z.object({ workspace: workspaceRef, files: z.array(fileInfoSchema) }), 'The files'), ...errorResponses(404) },
});
const getFile = createRoute({
  method: 'get',
  path: '/{id}/workspace/files/{path}',
  tags,
  summary: "One file's exact bytes",
  description: 'The path may hold slashes (`…/files/src/main.ts`); percent-encode other reserved characters.',
  request: { params: z.object({ id: z.string().describe('Session id'), path: z.string().describe('Relative file path') }) },
  responses: {
    200: {
      description: 'The bytes',
      headers: { 'x-content-sha256': { schema: { type: 'string' }, description: "The file's SHA-256, hex" } },
      content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } },
    },
    ...errorResponses(400, 404),
  },
});
const getArchive = createRoute({
  method: 'get',
  path: '/{id}/workspace/archive',
  tags,
  summary: 'The whole workspace as tar.gz',
  request: { params: sessionIdParam },
  responses: {
    200: { description: 'The archive', content: { 'application/gzip': { schema: z.string().openapi({ format: 'binary' }) } } },
    ...errorResponses(404),
  },
});

/** What the workspace routes use: sessions, ids and the egress setting, plus the workspace operations' needs. */
type WorkspaceRouteDeps = Pick<Deps, 'sessions' | 'newId' | 'config'> &
  DepsOf<typeof putUpload> &
  DepsOf<typeof importIntoWorkspace> &
  DepsOf<typeof runWorkspaceOp> &
  DepsOf<typeof getObjectStream> &
  DepsOf<typeof withStagedArchive>;

/**
 * A session's workspace over HTTP:
 *   PUT  /:id/workspace/archive   body: tar.gz → fills an empty workspace
 *   POST /:id/workspace/git       { url, ref?, depth?, token? } → clones into an empty workspace
 *   GET  /:id/workspace/files     every path with type, size, mode
 *   GET  /:id/workspace/files/*   one file's exact bytes
 *   GET  /:id/workspace/archive   the whole workspace as tar.gz
 */
export function workspaceRoutes(deps: WorkspaceRouteDeps) {
  const app = createRouteApp();
  const session = (id: string, tenantId: string) => deps.sessions.getForTenant(id, tenantId);

  app.openapi(putArchive, putArchiveHandler(deps));

  app.openapi(gitImport, async (c) => {
    const body = c.req.valid('json');
    const record = await session(c.req.valid('param').id, c.get('tenantId'));
    const gitRefusal = gitImportRefusal(deps.config.egress);
    if (gitRefusal) throw new UserError(gitRefusal, 'egress_unavailable');
    const { version, result } = await importIntoWorkspace(deps, record, { type: 'import_git' as const, ...body });
    return c.json({ workspace: { id: record.workspace.id, version }, url: result.url, ref: result.ref ?? null, depth: result.depth }, 201);
  });

  app.openapi(listFiles, async (c) => {
    const record = await session(c.req.valid('param').id, c.get('tenantId'));
    const result = await runWorkspaceOp(deps, record, { type: 'list_files' });
    return c.json({ workspace: record.workspace, files: result.files }, 200);
  });

  // The documented `{path}` holds slashes, which a `:path` parameter would not match: the route
  // is declared for the document and served by a wildcard.
  app.openAPIRegistry.registerPath(getFile);
  app.get('/:id/workspace/files/*', async (c) => {
    const record = await session(c.req.param('id'), c.get('tenantId'));
    const prefix = `/v1/sessions/${record.sessionId}/workspace/files/`;
    return exportFile(deps, record, filePathFromUrl(c.req.path.slice(c.req.path.indexOf(prefix) + prefix.length)));
  });

  app.openapi(getArchive, async (c) => {
    const record = await session(c.req.valid('param').id, c.get('tenantId'));
    const result = await runWorkspaceOp(deps, record, { type: 'export_archive' });
    const name = `${record.workspace.id}-v${record.workspace.version}.tar.gz`;
    return untypedResponse(
      new Response(await getObjectStream(deps, record.workspace.id, result.key), {
        headers: { 'content-type': 'application/gzip', 'content-length': String(result.size), 'content-disposition': `attachment; filename="${name}"` },
      }),
    );
  });

  return app;
}

/** PUT …/workspace/archive: the tar.gz body goes to S3 (streamed, never buffered), then into the empty workspace. */
function putArchiveHandler(deps: WorkspaceRouteDeps): RouteHandler<typeof putArchive, ApiEnv> {
  return async (c) => {
    const record = await deps.sessions.getForTenant(c.req.valid('param').id, c.get('tenantId'));
    const length = Number(c.req.header('content-length'));
    if (!Number.isInteger(length) || length <= 0) {
      throw new UserError('Send the tar.gz as the request body with a Content-Length header.', 'length_required', 411);
    }
    const body = c.req.raw.body;
    if (!body) throw new UserError('Send the tar.gz as the request body.', 'length_required', 411);
    const key = uploadKey(record.workspace.id, deps.newId('up'));
    const { version, result } = await withStagedArchive(deps, record, { full: key.full, bytes: length }, async () => {
      await putUpload(deps, record.workspace.id, key.full, Readable.fromWeb(body as unknown as NodeWebStream), length);
      return importIntoWorkspace(deps, record, { type: 'import_archive', key: key.relative }, length);
    });
    return c.json({ workspace: { id: record.workspace.id, version }, files: result.files, bytes: result.bytes, skipped: result.skipped }, 201);
  };
}

/** One file's exact bytes, with its size and SHA-256. */
async function exportFile(deps: WorkspaceRouteDeps, record: SessionRecord, filePath: string): Promise<Response> {
  const result = await runWorkspaceOp(deps, record, { type: 'export_file', path: filePath });
  return new Response(await getObjectStream(deps, record.workspace.id, result.key), {
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(result.size), 'x-content-sha256': result.sha256 },
  });
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
