import { createRoute, z } from '@hono/zod-openapi';
import { readPersistedResult } from '../../context/persisted-output.ts';
import type { Deps } from '../../deps/deps.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { showId } from '../../shared/ids.ts';
import { createRouteApp, untypedResponse } from '../route-app.ts';
import { errorResponses, sessionIdParam } from '../schemas/common.ts';

const params = sessionIdParam.extend({
  toolUseId: z
    .string()
    .describe('The tool call whose result was persisted (the file name in the `<persisted-output>` path, without extension)')
    .openapi({ param: { name: 'toolUseId', in: 'path' } }),
});

const get = createRoute({
  method: 'get',
  path: '/{id}/tool-results/{toolUseId}',
  tags: ['Sessions'],
  summary: 'The full content of a persisted tool result',
  description:
    "A result too large for the conversation is stored whole and the log keeps a `<persisted-output>` preview naming it; this returns it as stored (text, or a JSON array of text blocks). Persisted results expire with the bucket's tool-results lifecycle rule.",
  request: { params },
  responses: {
    200: {
      description: 'The stored result',
      content: { 'text/plain': { schema: z.string() }, 'application/json': { schema: z.array(z.object({ type: z.literal('text'), text: z.string() })) } },
    },
    ...errorResponses(404),
  },
});

/** Persisted tool results, opened by people (the model opens them with Read). */
export function toolResultRoutes(deps: Pick<Deps, 'sessions' | 'blobs'>) {
  const app = createRouteApp();
  app.openapi(get, async (c) => {
    const { id: sessionId, toolUseId } = c.req.valid('param');
    await deps.sessions.getForTenant(sessionId, c.get('tenantId'));
    const stored = await readPersistedResult(deps.blobs, sessionId, toolUseId);
    if (!stored) throw new NotFoundError(`Session ${sessionId} has no persisted result for tool call ${showId(toolUseId)}.`);
    return untypedResponse(c.body(stored.text, 200, { 'content-type': stored.isJson ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8' }));
  });
  return app;
}
