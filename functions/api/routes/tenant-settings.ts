import { createRoute, z } from '@hono/zod-openapi';
import type { Deps } from '../../deps/deps.ts';
import type { TenantSettingsRecord } from '../../stores/tenant-settings-store.ts';
import { setupSettingsSchema } from '../../session-settings/setup-settings.ts';
import { createRouteApp, jsonBodyLimit } from '../route-app.ts';
import { errorResponses, json } from '../schemas/common.ts';

const tags = ['Tenant'];

/** Longest text a tenant may set in one field: about 10k tokens, well under the instructions cap. */
export const MAX_TENANT_TEXT_CHARS = 40_000;

/**
 * Every field a tenant can set for all of its sessions. New settings are added here (and to
 * `TenantSettings` in functions/stores/tenant-settings-store.ts); unknown fields are refused, so
 * a typo never passes for a setting.
 */
const tenantSettingsSchema = z
  .strictObject({
    instructions: z
      .string()
      .max(MAX_TENANT_TEXT_CHARS)
      .optional()
      .describe("Instructions every session of the tenant gets, ahead of the project's CLAUDE.md and AGENTS.md (docs/context.md)"),
    systemPromptAppend: z
      .string()
      .max(MAX_TENANT_TEXT_CHARS)
      .optional()
      .describe("Text appended to the end of Stratus's system prompt for every session of the tenant, after the operator's"),
    setup: setupSettingsSchema
      .optional()
      .describe(
        "The set-up every session of the tenant starts from: its script runs where neither the session, nor the repository's settings, nor a .stratus/setup.sh name one; its timeout, registries and enabled apply where the session's setting leaves them out (docs/environments.md)",
      ),
  })
  .openapi('TenantSettings');

const tenantSettingsView = z
  .object({ settings: tenantSettingsSchema, updatedAt: z.string().nullable().describe('When they were last set; null if never') })
  .openapi('TenantSettingsView');

const get = createRoute({
  method: 'get',
  path: '/settings',
  tags,
  summary: "The tenant's settings",
  responses: { 200: json(tenantSettingsView, "The tenant's settings ({} when none were set)"), ...errorResponses() },
});

const put = createRoute({
  method: 'put',
  path: '/settings',
  tags,
  summary: "Replace the tenant's settings",
  description: 'The whole object is replaced: a field left out is cleared. Sessions see the change from their next turn.',
  middleware: [jsonBodyLimit(256 * 1024)] as const,
  request: { body: { content: { 'application/json': { schema: tenantSettingsSchema } }, required: true } },
  responses: { 200: json(tenantSettingsView, 'The settings as stored'), ...errorResponses(400, 413, 415) },
});

function view(record: TenantSettingsRecord | undefined) {
  return { settings: record?.settings ?? {}, updatedAt: record?.updatedAt ?? null };
}

/** `GET/PUT /v1/tenant/settings`: what the bearer token's tenant sets for all of its sessions. */
export function tenantSettingsRoutes(deps: Pick<Deps, 'tenantSettings' | 'clock'>) {
  const app = createRouteApp();
  app.openapi(get, async (c) => c.json(view(await deps.tenantSettings.get(c.get('tenantId'))), 200));
  app.openapi(put, async (c) => {
    const record = await deps.tenantSettings.put(c.get('tenantId'), c.req.valid('json'), deps.clock());
    return c.json(view(record), 200);
  });
  return app;
}
