import { useEffect, useState } from 'preact/hooks';
import { api, authHeaders, errorText, type Schemas } from '../api.ts';
import { CodeView } from './code-view.tsx';

const MAX_VIEW = 512 * 1024;

/** The workspace's files at its current version, and one opened as text. */
export function WorkspaceFiles({ sessionId, version }: { sessionId: string; version: number }) {
  const [files, setFiles] = useState<Schemas['WorkspaceFile'][] | null>(null);
  const [open, setOpen] = useState<{ path: string; text: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void api.GET('/v1/sessions/{id}/workspace/files', { params: { path: { id: sessionId } } }).then((r) => {
      if (r.data) setFiles(r.data.files.filter((f) => f.type !== 'dir'));
      else setError(errorText(r.error, r.response));
    });
  }, [sessionId, version]);
  const view = async (path: string) => {
    const url = `/v1/sessions/${encodeURIComponent(sessionId)}/workspace/files/${path.split('/').map(encodeURIComponent).join('/')}`;
    const res = await fetch(url, { headers: authHeaders() });
    if (!res.ok) return setError(errorText(await res.json().catch(() => undefined), res));
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = bytes.length > MAX_VIEW ? `(${bytes.length} bytes: too large to show here)` : new TextDecoder().decode(bytes);
    setOpen({ path, text: bytes.includes(0) ? `(binary, ${bytes.length} bytes)` : text });
  };
  return (
    <section aria-labelledby="ws-h" class="panel">
      <h2 id="ws-h" style="margin-top:0">
        Workspace <span class="muted">(version {version})</span>
      </h2>
      <button type="button" onClick={() => downloadArchive(sessionId).catch((err: Error) => setError(err.message))}>
        Download as .tar.gz
      </button>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {files && files.length === 0 && <p class="muted">Empty.</p>}
      {files && files.length > 0 && (
        <ul>
          {files.map((f) => (
            <li key={f.path}>
              <button type="button" class="link" onClick={() => view(f.path)} aria-pressed={open?.path === f.path}>
                {f.path}
              </button>{' '}
              <span class="muted">{f.size ?? ''} B</span>
            </li>
          ))}
        </ul>
      )}
      {open && (
        <figure aria-label={`File ${open.path}`} style="margin:0">
          <figcaption>
            <code>{open.path}</code>
          </figcaption>
          <CodeView path={open.path} text={open.text} />
        </figure>
      )}
    </section>
  );
}

/** The archive needs the bearer header, which a plain link cannot send: fetch it, then save the blob. */
async function downloadArchive(sessionId: string): Promise<void> {
  const res = await fetch(`/v1/sessions/${encodeURIComponent(sessionId)}/workspace/archive`, { headers: authHeaders() });
  if (!res.ok) throw new Error(errorText(await res.json().catch(() => undefined), res));
  const url = URL.createObjectURL(await res.blob());
  const a = Object.assign(document.createElement('a'), { href: url, download: `${sessionId}.tar.gz` });
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
