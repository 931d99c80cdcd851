import { Hono } from 'hono';
import { z } from 'zod';
import { VIRTUAL_ROOT } from '../../../sandbox-runner/workspace/virtual-paths.ts';
import { compactSession, exportTranscript, importTranscript, parseTranscriptForImport } from '../../agent/session-ops.ts';
import { uuidFrom } from '../../context/claude-jsonl.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { createSession } from '../../sessions/create-session.ts';
import { sessionView } from '../../sessions/session-view.ts';
import type { AuthVariables } from '../auth.ts';
import { parseWith } from '../validate.ts';

const exportQuery = z.object({
  cwd: z.string().startsWith('/', 'must be an absolute path').max(4096).default(VIRTUAL_ROOT).describe('The directory the transcript says it ran in (where you will run `claude --resume`)'),
});
const importQuery = z.object({ title: z.string().max(200).optional() });

/** Compaction on demand, and moving sessions between Stratus and a local Claude Code. */
export function contextRoutes(
  deps: Pick<Deps, 'clock'> & DepsOf<typeof compactSession> & DepsOf<typeof exportTranscript> & DepsOf<typeof importTranscript> & DepsOf<typeof createSession>,
) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post('/:id/compact', async (c) => {
    return c.json(await compactSession(deps, { sessionId: c.req.param('id'), tenantId: c.get('tenantId') }));
  });

  app.get('/:id/transcript.jsonl', async (c) => {
    const q = parseWith(exportQuery, c.req.query(), 'query');
    const sessionId = c.req.param('id');
    const body = await exportTranscript(deps, { sessionId, tenantId: c.get('tenantId'), cwd: q.cwd });
    const claudeSessionId = uuidFrom(sessionId);
    return c.body(body, 200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'content-disposition': `attachment; filename="${claudeSessionId}.jsonl"`,
      'x-claude-session-id': claudeSessionId,
    });
  });

  app.post('/import', async (c) => {
    const q = parseWith(importQuery, c.req.query(), 'query');
    const tenantId = c.get('tenantId');
    const items = parseTranscriptForImport(await c.req.text());
    const created = await createSession(deps, { tenantId, title: q.title ?? 'Imported from Claude Code' });
    const record = await importTranscript(deps, { sessionId: created.sessionId, tenantId, items });
    return c.json(sessionView(record, deps.clock(), deps.config), 201);
  });

  return app;
}
