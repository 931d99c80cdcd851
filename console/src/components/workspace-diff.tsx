import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type Message, type Schemas } from '../api.ts';

type Diff = Schemas['WorkspaceDiff'];
type FileChange = Schemas['WorkspaceFileChange'];

/** A turn to pick in the selector: its id and what started it. */
export interface TurnChoice {
  turnId: string;
  label: string;
}

/** The session's turns in order, named by their prompt (a turn resumed after an approval has none). */
export function turnChoices(messages: Message[]): TurnChoice[] {
  const turns: TurnChoice[] = [];
  const seen = new Set<string>();
  for (const m of messages) {
    if (seen.has(m.turnId) || (m.kind !== 'prompt' && m.kind !== 'assistant' && m.kind !== 'tool_result')) continue;
    seen.add(m.turnId);
    const prompt = m.kind === 'prompt' ? firstText(m.content) : undefined;
    const n = turns.length + 1;
    turns.push({ turnId: m.turnId, label: prompt ? `Turn ${n}: ${prompt.length > 60 ? `${prompt.slice(0, 60)}…` : prompt}` : `Turn ${n} (resumed)` });
  }
  return turns;
}

function firstText(content: Message['content']): string | undefined {
  for (const block of content as { type: string; text?: string }[]) if (block.type === 'text' && block.text) return block.text;
  return undefined;
}

const SKIPPED: Record<NonNullable<FileChange['skipped']>, string> = {
  binary: 'Binary file: not shown.',
  too_large: 'Too large to diff here.',
  too_complex: 'Too many changes to diff quickly.',
  size_cap: "Left out: this answer's diff size limit was reached.",
  unavailable: 'A version of this file could not be read from storage.',
};

/**
 * What the agent changed in the workspace: the whole session or one turn, each changed file
 * with its kind and, opened, its unified diff. Lines keep their +/- markers, so colour is never
 * the only sign of an added or removed line.
 */
export function WorkspaceDiff({ sessionId, version, turns }: { sessionId: string; version: number; turns: TurnChoice[] }) {
  const [turn, setTurn] = useState('');
  const [diff, setDiff] = useState<Diff | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    void api.GET('/v1/sessions/{id}/workspace/diff', { params: { path: { id: sessionId }, query: turn ? { turn } : {} } }).then((r) => {
      if (r.data) setDiff(r.data);
      else setError(errorText(r.error, r.response));
    });
  }, [sessionId, version, turn]);
  const added = diff?.files.reduce((n, f) => n + (f.additions ?? 0), 0) ?? 0;
  const removed = diff?.files.reduce((n, f) => n + (f.deletions ?? 0), 0) ?? 0;
  return (
    <section aria-labelledby="diff-h" class="panel">
      <h2 id="diff-h" style="margin-top:0">
        Changes
      </h2>
      <label>
        Show the changes of{' '}
        <select value={turn} onChange={(e) => setTurn((e.target as HTMLSelectElement).value)} style="width:auto">
          <option value="">the whole session</option>
          {turns.map((t) => (
            <option key={t.turnId} value={t.turnId}>
              {t.label}
            </option>
          ))}
        </select>
      </label>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {diff && (
        <>
          <p aria-live="polite">
            {diff.totalFiles === 0 ? 'No changes' : `${diff.totalFiles} ${diff.totalFiles === 1 ? 'file' : 'files'} changed, +${added} −${removed}`}{' '}
            <span class="muted">
              (version {diff.from} → {diff.to})
            </span>
          </p>
          {diff.truncated && (
            <p class="notice">
              Only part of the change is shown here: {diff.files.length} of {diff.totalFiles} files, diffs within the size limit.
            </p>
          )}
          <ul class="diff-files">
            {diff.files.map((f) => (
              <li key={`${diff.from}-${diff.to}:${f.path}`}>
                <FileDiff sessionId={sessionId} diff={diff} file={f} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function FileDiff({ sessionId, diff, file }: { sessionId: string; diff: Diff; file: FileChange }) {
  const [loaded, setLoaded] = useState<FileChange>(file);
  const [error, setError] = useState<string | null>(null);
  // A diff left out for the answer's size: fetch this one path alone.
  const loadOne = async () => {
    const r = await api.GET('/v1/sessions/{id}/workspace/diff', {
      params: { path: { id: sessionId }, query: { from: diff.from, to: diff.to, path: file.path } },
    });
    if (r.data?.files[0]) setLoaded(r.data.files[0]);
    else setError(r.error ? errorText(r.error, r.response) : 'Not found.');
  };
  return (
    <details class="diff-file">
      <summary>
        <span class={`diff-kind diff-kind-${file.kind}`}>{file.kind}</span> <code>{file.path}</code>{' '}
        {file.additions !== undefined && (
          <span class="muted">
            +{file.additions} −{file.deletions}
          </span>
        )}
      </summary>
      {describe(file)}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {loaded.diff !== undefined && <DiffText text={loaded.diff} path={file.path} />}
      {loaded.diff === undefined && loaded.skipped && <p class="muted">{SKIPPED[loaded.skipped]}</p>}
      {loaded.diff === undefined && loaded.skipped === 'size_cap' && (
        <button type="button" onClick={loadOne}>
          Load this file's diff
        </button>
      )}
    </details>
  );
}

function describe(f: FileChange) {
  const mode = (m?: number) => (m === undefined ? '' : m.toString(8));
  if (f.kind === 'mode')
    return (
      <p>
        Mode {mode(f.oldMode)} → {mode(f.newMode)}
      </p>
    );
  if (f.kind === 'symlink' || f.oldTarget !== undefined || f.newTarget !== undefined) {
    return (
      <p>
        Link: {f.oldTarget ?? (f.oldSize !== undefined ? '(a file)' : '(none)')} → {f.newTarget ?? (f.newSize !== undefined ? '(a file)' : '(none)')}
      </p>
    );
  }
  return null;
}

/** A unified diff, one element per line; the +/- (and @@) markers stay in the text. */
function DiffText({ text, path }: { text: string; path: string }) {
  const lines = text.replace(/\n$/, '').split('\n');
  // A <pre> has no role that takes a name; as a figure it is announced by its label.
  return (
    // biome-ignore lint/a11y/useSemanticElements: the lines must stay a <pre> (whitespace kept, copied as text)
    <pre class="diff" role="figure" aria-label={`Diff of ${path}`}>
      {lines.map((line, i) => (
        <span key={i} class={lineClass(line)}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

function lineClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-head';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  return 'diff-ctx';
}
