import { cliFetch } from './http.ts';
import { writeFileSync } from 'node:fs';
import { apiError, ok, type Api } from './client.ts';
import { packDirectory, unpackInto } from './archive.ts';
import { uploadArchive } from './archive-upload.ts';
import { CliError, EXIT } from './exit-codes.ts';

type Print = (human: string, json: unknown) => void;

/**
 * `stratus new`: a session, empty or filled from a folder or a git URL. Returns its id. The
 * folder is packed before the session exists, and a session whose filling fails is deleted, so
 * a failed `new` leaves nothing behind.
 */
export async function newSession(client: Api, opts: { from?: string; git?: string; title?: string; permissionMode?: string }, print: Print): Promise<string> {
  if (opts.from && opts.git) throw new CliError('Give --from or --git, not both.', EXIT.usage);
  const archive = opts.from ? await packDirectory(opts.from) : undefined;
  const settings = opts.permissionMode ? { permissionMode: opts.permissionMode as 'default' } : undefined;
  const session = ok(await client.api.POST('/v1/sessions', { body: { ...(opts.title ? { title: opts.title } : {}), ...(settings ? { settings } : {}) } }));
  let filled: unknown;
  try {
    if (archive) filled = await uploadArchive(client, session.id, archive);
    else if (opts.git) filled = ok(await client.api.POST('/v1/sessions/{id}/workspace/git', { params: { path: { id: session.id } }, body: { url: opts.git } }));
  } catch (err) {
    const removed = await client.api.DELETE('/v1/sessions/{id}', { params: { path: { id: session.id } } }).then(
      (r) => r.response.ok,
      () => false,
    );
    if (removed || !(err instanceof Error)) throw err;
    throw new CliError(
      `${err.message} (session ${session.id} could not be deleted: DELETE /v1/sessions/${session.id} removes it)`,
      err instanceof CliError ? err.exitCode : EXIT.failed,
    );
  }
  const what = opts.from ? ` with ${(filled as { files: number }).files} files from ${opts.from}` : opts.git ? ` cloned from ${opts.git}` : '';
  print(`${session.id}${what}`, { session, workspace: filled ?? null });
  return session.id;
}

export async function listSessions(client: Api, limit: number, print: Print): Promise<void> {
  const page = ok(await client.api.GET('/v1/sessions', { params: { query: { limit, order: 'activity' } } }));
  const rows = page.sessions.map((s) => `${s.id}  ${s.status.padEnd(19)} ${String(s.turnCount).padStart(3)} turns  ${s.updatedAt}  ${s.title ?? ''}`);
  print(rows.join('\n') || '(no sessions)', page);
}

/** `stratus log`: the message log, every page. */
export async function sessionLog(client: Api, sessionId: string, print: Print): Promise<void> {
  const messages = [];
  let cursor: string | undefined;
  do {
    const page = ok(
      await client.api.GET('/v1/sessions/{id}/messages', { params: { path: { id: sessionId }, query: { limit: 200, ...(cursor ? { cursor } : {}) } } }),
    );
    messages.push(...page.messages);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  const text = messages.map((m) => {
    const body = m.content
      .map((b) =>
        b.type === 'text'
          ? String(b.text)
          : b.type === 'tool_use'
            ? `[${String(b.name)} ${JSON.stringify(b.input)}]`
            : b.type === 'tool_result'
              ? `[result] ${resultPreview(b.content)}`
              : `[${b.type}]`,
      )
      .join(' ');
    return `#${m.seq} ${m.role} (${m.kind}): ${body}`;
  });
  print(text.join('\n'), messages);
}

/** A tool result in one line: its first line that has text (a result may start with blank lines), or what it holds. */
function resultPreview(content: unknown): string {
  const blocks =
    typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as { type?: string; text?: string }[]) : [];
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('\n');
  const line = text
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim();
  if (line !== undefined) return line;
  const others = blocks.filter((b) => b.type !== 'text').map((b) => `[${b.type}]`);
  return others.length > 0 ? others.join(' ') : '(empty)';
}

/** `stratus pull`: the workspace into a local folder. */
export async function pullWorkspace(client: Api, sessionId: string, dir: string, print: Print): Promise<void> {
  const res = await cliFetch(`${client.url}/v1/sessions/${encodeURIComponent(sessionId)}/workspace/archive`, {
    headers: { authorization: `Bearer ${client.token}` },
  });
  if (!res.ok) throw apiError(res.status, await res.json().catch(() => undefined));
  const files = await unpackInto(Buffer.from(await res.arrayBuffer()), dir);
  print(`${files} files → ${dir}`, { sessionId, dir, files });
}

/** `stratus transcript`: the Claude Code JSONL, to a file or stdout. */
export async function transcript(client: Api, sessionId: string, outFile: string | undefined, out: NodeJS.WriteStream): Promise<void> {
  const res = await cliFetch(`${client.url}/v1/sessions/${encodeURIComponent(sessionId)}/transcript.jsonl`, {
    headers: { authorization: `Bearer ${client.token}` },
  });
  if (!res.ok) throw apiError(res.status, await res.json().catch(() => undefined));
  const body = await res.text();
  if (outFile) {
    writeFileSync(outFile, body);
    out.write(`wrote ${outFile} (continue it with: claude --resume ${res.headers.get('x-claude-session-id')})\n`);
  } else out.write(body);
}
