import { createRoute, z } from '@hono/zod-openapi';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { NotFoundError, UserError } from '../../shared/errors.ts';
import { isId, showId } from '../../shared/ids.ts';
import type { SessionRecord } from '../../stores/session-store.ts';
import { runWorkspaceOp } from '../../workspaces/workspace-ops.ts';
import { createRouteApp } from '../route-app.ts';
import { errorResponses, json, sessionIdParam } from '../schemas/common.ts';

/** The runner's caps (sandbox-runner/ops/workspace-diff-op.ts), repeated for the document: the API does not load the runner's ops. */
const MAX_FILES = 1_000;
const MAX_DIFF_BYTES = 1024 * 1024;
const MAX_FILE_BYTES = 512 * 1024;

const version = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const query = z.object({
  turn: z.string().max(200).optional().describe("A turn id: that turn's changes (from the version it started at to the one it left)"),
  from: version.optional().describe("The earlier version (default: the version the session's first turn started from)"),
  to: version.optional().describe("The later version (default: the workspace's current version)"),
  path: z.string().max(4096).optional().describe('Only this path (to fetch a diff a capped answer left out)'),
});

const fileChange = z
  .object({
    path: z.string(),
    kind: z
      .enum(['added', 'modified', 'deleted', 'mode', 'symlink'])
      .describe("`mode`: same content, another mode. `symlink`: a link's target changed, or a file became a link or back"),
    oldMode: z.number().int().optional(),
    newMode: z.number().int().optional(),
    oldSize: z.number().int().optional(),
    newSize: z.number().int().optional(),
    oldTarget: z.string().optional(),
    newTarget: z.string().optional(),
    additions: z.number().int().optional(),
    deletions: z.number().int().optional(),
    diff: z.string().optional().describe("Unified diff (`--- a/…`, `+++ b/…`, hunks with 3 lines of context) of a text file's content"),
    skipped: z
      .enum(['binary', 'too_large', 'too_complex', 'size_cap', 'unavailable'])
      .optional()
      .describe(
        `Why a changed file has no \`diff\`: \`binary\` (a NUL byte or not UTF-8), \`too_large\` (a side over ${MAX_FILE_BYTES} bytes), \`too_complex\` (the line diff gave up), \`size_cap\` (the answer's ${MAX_DIFF_BYTES} bytes of diff were reached: ask with \`?path=\`), \`unavailable\` (a body is missing from storage)`,
      ),
  })
  .openapi('WorkspaceFileChange');

const diffBody = z
  .object({
    workspace: z.object({ id: z.string(), version: z.number().int() }),
    from: z.number().int(),
    to: z.number().int(),
    turnId: z.string().optional(),
    files: z.array(fileChange).describe(`Changed files and links by path (directories are not listed); at most ${MAX_FILES}`),
    totalFiles: z.number().int().describe('Changed paths in all'),
    diffBytes: z.number().int(),
    truncated: z.boolean().describe('Paths were left out (`totalFiles` > `files.length`) or diffs were (`skipped: size_cap`)'),
  })
  .openapi('WorkspaceDiff');

const getDiff = createRoute({
  method: 'get',
  path: '/{id}/workspace/diff',
  tags: ['Workspace'],
  summary: 'What changed in the workspace',
  description:
    "Without parameters: everything since the session's first turn started. `?turn=` gives one turn's changes, `?from=&to=` any two versions. " +
    'Per path the kind of change and, for text files, a unified diff; binary and large files are flagged, not diffed.',
  request: { params: sessionIdParam, query },
  responses: { 200: json(diffBody, 'The changes'), ...errorResponses(400, 404) },
});

type DiffRouteDeps = Pick<Deps, 'sessions' | 'events'> & DepsOf<typeof runWorkspaceOp>;

/** GET /:id/workspace/diff: the changes between two versions, computed by the runner (it holds the workspace's credentials). */
export function workspaceDiffRoutes(deps: DiffRouteDeps) {
  const app = createRouteApp();
  app.openapi(getDiff, async (c) => {
    const q = c.req.valid('query');
    const record = await deps.sessions.getForTenant(c.req.valid('param').id, c.get('tenantId'));
    const { from, to } = q.turn !== undefined ? await turnRange(deps, record, q) : sessionRange(record, q);
    const result = await runWorkspaceOp(deps, record, { type: 'workspace_diff', from, to, ...(q.path !== undefined ? { paths: [q.path] } : {}) });
    return c.json(
      {
        workspace: record.workspace,
        from,
        to,
        ...(q.turn !== undefined ? { turnId: q.turn } : {}),
        files: result.files,
        totalFiles: result.totalFiles,
        diffBytes: result.diffBytes,
        truncated: result.truncated,
      },
      200,
    );
  });
  return app;
}

type Query = z.infer<typeof query>;

/** `?from=&to=`, defaulting to the first turn's start and the current version. */
function sessionRange(record: SessionRecord, q: Query): { from: number; to: number } {
  const current = record.workspace.version;
  // No turn ran yet: nothing the agent changed (the base is written with the first turn's lease).
  const from = q.from ?? record.workspaceBase ?? current;
  const to = q.to ?? current;
  if (to > current) throw new UserError(`"to" is ${to}, but the workspace is at version ${current}.`);
  if (from > to) throw new UserError(`"from" (${from}) is after "to" (${to}).`);
  return { from, to };
}

/**
 * A turn's versions, from its turn_start and turn_end events. A turn still running, or one that
 * crashed (a reader wrote its end without the version), reaches to the current version. A first
 * turn that ran set-up steps starts where they left the workspace (their setup_end follows
 * turn_start and setup_start): what they installed is not the agent's change.
 */
async function turnRange(deps: Pick<Deps, 'events'>, record: SessionRecord, q: Query): Promise<{ from: number; to: number }> {
  const turnId = q.turn!;
  if (q.from !== undefined || q.to !== undefined) throw new UserError('Give either "turn" or "from"/"to", not both.');
  const unknown = () => new NotFoundError(`Turn ${showId(turnId)} not found in session ${record.sessionId}.`);
  if (!isId('turn', turnId)) throw unknown();
  const head = await deps.events.listAfter(record.sessionId, turnId, -1, 3);
  const first = head[0];
  if (!first) throw unknown();
  const setupEnd = head.find((e) => e.event.type === 'setup_end')?.event as { workspaceVersion?: number } | undefined;
  if (first.event.type !== 'turn_start' || first.event.workspaceVersion === undefined) {
    throw new NotFoundError(
      `Turn ${turnId} has no recorded workspace versions (it ran before they were recorded); use "from" and "to".`,
      'versions_not_recorded',
    );
  }
  const last = await deps.events.last(record.sessionId, turnId);
  const end = last?.event.type === 'turn_end' ? last.event.workspaceVersion : undefined;
  return { from: setupEnd?.workspaceVersion ?? first.event.workspaceVersion, to: end ?? record.workspace.version };
}
