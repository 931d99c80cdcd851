import { cliFetch, plainFetch } from './http.ts';
import { apiError, ok, type Api } from './client.ts';
import { CliError } from './exit-codes.ts';

/**
 * The largest archive sent as the request body of PUT …/workspace/archive. A deployed API sits
 * behind a Lambda Function URL, whose request payload is at most 6 MB after binary bodies are
 * base64-encoded (4/3 larger); past 4 MiB the archive goes to S3 through a presigned form.
 */
export const DIRECT_UPLOAD_MAX_BYTES = 4 * 1024 * 1024;

export type Imported = { files: number; bytes: number; skipped: number; workspace: { id: string; version: number } };

/** Fills the session's empty workspace with a tar.gz: directly when small, else presigned upload + import by reference. */
export async function uploadArchive(client: Api, sessionId: string, archive: Buffer): Promise<Imported> {
  if (archive.length <= DIRECT_UPLOAD_MAX_BYTES) return putDirect(client, sessionId, archive);
  const path = { id: sessionId };
  const form = ok(await client.api.POST('/v1/sessions/{id}/workspace/uploads', { params: { path }, body: { bytes: archive.length } }));
  const body = new FormData();
  for (const [name, value] of Object.entries(form.fields)) body.append(name, value);
  body.append('file', new Blob([new Uint8Array(archive)], { type: 'application/gzip' }), 'workspace.tar.gz');
  const uploaded = await plainFetch(form.url, { method: 'POST', body });
  if (!uploaded.ok) throw new CliError(`S3 refused the upload (HTTP ${uploaded.status}): ${(await uploaded.text()).slice(0, 500)}`);
  return ok(await client.api.POST('/v1/sessions/{id}/workspace/archive', { params: { path }, body: { uploadId: form.uploadId } }));
}

async function putDirect(client: Api, sessionId: string, archive: Buffer): Promise<Imported> {
  const res = await cliFetch(`${client.url}/v1/sessions/${sessionId}/workspace/archive`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${client.token}`, 'content-type': 'application/gzip' },
    body: new Uint8Array(archive),
  });
  if (!res.ok) throw apiError(res.status, await res.json().catch(() => undefined));
  return (await res.json()) as Imported;
}
