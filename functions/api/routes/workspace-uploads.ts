import { createRoute, z, type RouteHandler } from '@hono/zod-openapi';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { deleteObject, holdingImportLease, type importIntoWorkspace, importTarget, uploadKey, withStagedArchive } from '../../workspaces/workspace-ops.ts';
import { runOp } from '../../runner-client/workspace-client.ts';
import { createPresignedUpload, stagedUpload, UPLOAD_EXPIRY_SECONDS } from '../../workspaces/presigned-upload.ts';
import { createRouteApp, jsonBodyLimit, type ApiEnv } from '../route-app.ts';
import { errorResponses, idempotencyKeyHeader, json, sessionIdParam } from '../schemas/common.ts';
import { archiveTooLarge, MAX_ARCHIVE_UPLOAD_BYTES } from './workspace.ts';
import { LimitError } from '../../shared/errors.ts';

const tags = ['Workspace'];

const uploadBody = z
  .strictObject({
    bytes: z.number().int().min(1).optional().describe("The archive's size, when known: a size past the limit is refused here rather than by S3"),
  })
  .openapi('UploadRequest');
const presignedUpload = z
  .object({
    uploadId: z.string().describe('Names the upload in POST …/workspace/archive'),
    url: z.string().describe('POST a multipart/form-data form here'),
    fields: z.record(z.string(), z.string()).describe('Form fields to send, in this order, before the `file` field (the archive, last)'),
    maxBytes: z.number().int(),
    expiresAt: z.string().describe(`The upload must start before this (${UPLOAD_EXPIRY_SECONDS} s after the form was made)`),
  })
  .openapi('PresignedUpload');
const importBody = z.strictObject({ uploadId: z.string().min(1).max(256) }).openapi('ArchiveByReference');
const imported = z.object({
  workspace: z.object({ id: z.string(), version: z.number().int() }),
  files: z.number().int(),
  bytes: z.number().int(),
  skipped: z.number().int(),
});

const createUpload = createRoute({
  method: 'post',
  path: '/{id}/workspace/uploads',
  tags,
  summary: 'A presigned S3 form for a large archive',
  description: `For archives past what a request body may carry: upload the tar.gz straight to S3 with the form (\`fields\`, then \`file\`), then import it with POST …/workspace/archive \`{uploadId}\`. At most ${MAX_ARCHIVE_UPLOAD_BYTES} bytes; the workspace must be empty. Unimported uploads are removed after a day.`,
  middleware: [jsonBodyLimit(64 * 1024)] as const,
  request: { params: sessionIdParam, headers: idempotencyKeyHeader, body: { content: { 'application/json': { schema: uploadBody } }, required: false } },
  responses: { 201: json(presignedUpload, 'The form'), ...errorResponses(400, 404, 409, 413, 415, 422) },
});
const importUpload = createRoute({
  method: 'post',
  path: '/{id}/workspace/archive',
  tags,
  summary: 'Fill an empty workspace from an uploaded tar.gz',
  description:
    "Imports an archive uploaded with a form from POST …/workspace/uploads of the same session (404 for an unknown upload or another session's), then removes the upload.",
  middleware: [jsonBodyLimit(64 * 1024)] as const,
  request: { params: sessionIdParam, headers: idempotencyKeyHeader, body: { content: { 'application/json': { schema: importBody } }, required: true } },
  responses: { 201: json(imported, 'What was imported'), ...errorResponses(400, 404, 409, 413, 415, 422, 429) },
});

type UploadRouteDeps = Pick<Deps, 'sessions' | 'newId' | 'clock'> &
  DepsOf<typeof createPresignedUpload> &
  DepsOf<typeof importIntoWorkspace> &
  DepsOf<typeof deleteObject>;

/**
 * Large archives, past the Lambda request limit: a presigned S3 POST form, then the import by
 * reference. The upload goes to S3 directly; the API only signs and later checks it.
 *   POST /:id/workspace/uploads   { bytes? } → { uploadId, url, fields, maxBytes, expiresAt }
 *   POST /:id/workspace/archive   { uploadId } → imports it (PUT with a tar.gz body stays the direct path)
 */
export function workspaceUploadRoutes(deps: UploadRouteDeps) {
  const app = createRouteApp();
  app.openapi(createUpload, async (c) => {
    const { bytes } = c.req.valid('json');
    if (bytes !== undefined && bytes > MAX_ARCHIVE_UPLOAD_BYTES) throw archiveTooLarge(bytes);
    const record = await deps.sessions.getForTenant(c.req.valid('param').id, c.get('tenantId'));
    // A tenant at its storage quota could not import the archive: say so before it is uploaded.
    await deps.tenantUsage.assertRoom(record.tenantId);
    return c.json(await createPresignedUpload(deps, record, MAX_ARCHIVE_UPLOAD_BYTES), 201);
  });
  app.openapi(importUpload, importHandler(deps));
  return app;
}

/**
 * POST …/workspace/archive {uploadId}: under the session's import lease, the staged object is
 * checked, imported, then removed (also when refused). Only the lease's holder touches the
 * upload, so of concurrent imports of one upload one imports it and the others get 409 while
 * the winner's object stays where its import reads it.
 */
function importHandler(deps: UploadRouteDeps): RouteHandler<typeof importUpload, ApiEnv> {
  return async (c) => {
    const record = await deps.sessions.getForTenant(c.req.valid('param').id, c.get('tenantId'));
    const { uploadId } = c.req.valid('json');
    const { version, result } = await holdingImportLease(deps, record, async () => {
      const upload = await stagedUpload(deps, record, uploadId, MAX_ARCHIVE_UPLOAD_BYTES).catch(async (err: unknown) => {
        if (err instanceof LimitError) await removeUpload(deps, record.workspace.id, uploadId);
        throw err;
      });
      return withStagedArchive(deps, record, { full: upload.full, bytes: upload.size }, () =>
        runOp(deps, importTarget(deps, record, upload.size), { type: 'import_archive', key: upload.relative }),
      );
    });
    return c.json({ workspace: { id: record.workspace.id, version }, files: result.files, bytes: result.bytes, skipped: result.skipped }, 201);
  };
}

async function removeUpload(deps: UploadRouteDeps, workspaceId: string, uploadId: string): Promise<void> {
  await deleteObject(deps, workspaceId, uploadKey(workspaceId, uploadId).full).catch(() => undefined);
}
