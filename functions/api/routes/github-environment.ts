import { createRoute, z } from '@hono/zod-openapi';
import type { Deps } from '../../deps/deps.ts';
import { dropLayers } from '../../environments/environment-layer.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { createRouteApp } from '../route-app.ts';
import { errorResponses, json } from '../schemas/common.ts';
import { repositoryNameSchema } from './github.ts';

const params = z.object({ owner: z.string().describe('Repository owner'), name: z.string().describe('Repository name') });

const dropEnvironment = createRoute({
  method: 'delete',
  path: '/repositories/{owner}/{name}/environment',
  tags: ['GitHub'],
  summary: "Drop a repository's cached environment",
  description:
    'Removes every cached environment layer of this tenant\'s repository (docs/workspaces.md, "The cached environment"): the next run\'s set-up steps run in full and store a new one. Sessions already running keep the layer their runner holds. 404 when the tenant has not connected the repository.',
  request: { params },
  responses: {
    200: json(
      z
        .object({ repository: z.string(), deleted: z.number().int().describe('Layers removed (one per set-up fingerprint stored)') })
        .openapi('DroppedEnvironment'),
      'The layers are gone',
    ),
    ...errorResponses(404),
  },
});

/** A connected repository's cached environment (`/v1/github/...`, bearer auth). */
export function githubEnvironmentRoutes(deps: Pick<Deps, 'github' | 'workspaceCredentials' | 'workspaceStorage' | 'config'>) {
  const app = createRouteApp();
  app.openapi(dropEnvironment, async (c) => {
    const { owner, name } = c.req.valid('param');
    const full = `${owner}/${name}`;
    if (!repositoryNameSchema.safeParse(full).success) throw new NotFoundError(`Repository ${full.slice(0, 200)} is not connected.`);
    const tenantId = c.get('tenantId');
    const record = await deps.github.getRepoForTenant(full, tenantId);
    const [ownerName, repoName] = record.fullName.split('/') as [string, string];
    const deleted = await dropLayers(deps, tenantId, { owner: ownerName, name: repoName });
    return c.json({ repository: record.fullName, deleted }, 200);
  });
  return app;
}
