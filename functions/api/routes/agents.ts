import { createRoute, z } from '@hono/zod-openapi';
import type { Deps } from '../../deps/deps.ts';
import { getSessionAgent, listSessionAgents } from '../../session/session-agents.ts';
import { messagePageView } from '../../session/session-view.ts';
import { agentLogId } from '../../stores/agent-log.ts';
import { createRouteApp } from '../route-app.ts';
import { errorResponses, json, pageQuerySchema, sessionIdParam } from '../schemas/common.ts';
import { messagePageSchema } from '../schemas/sessions.ts';

const tags = ['Sub-agents'];

const agentSchema = z
  .object({
    agentId: z.string(),
    toolUseId: z.string().describe('The parent tool_use that started it'),
    subagentType: z.string().describe('`general-purpose`, `Explore`, `Plan`, … or `fork`'),
    description: z.string(),
    status: z.enum(['running', 'completed', 'failed']),
    background: z.boolean().describe('Launched with `run_in_background` (runs in its own invocation; its status is its own)'),
    turnId: z.string(),
    createdAt: z.string(),
    messagesUrl: z.string(),
  })
  .openapi('SubAgent');

const agentParams = sessionIdParam.extend({
  agentId: z
    .string()
    .describe('Sub-agent id (`agent_<tool_use id>`)')
    .openapi({ param: { name: 'agentId', in: 'path' } }),
});

const list = createRoute({
  method: 'get',
  path: '/{id}/agents',
  tags,
  summary: "The session's sub-agents (Agent tool calls), in call order",
  request: { params: sessionIdParam },
  responses: { 200: json(z.object({ agents: z.array(agentSchema) }), 'Every sub-agent the session started'), ...errorResponses(404) },
});

const messages = createRoute({
  method: 'get',
  path: '/{id}/agents/{agentId}/messages',
  tags,
  summary: "A sub-agent's own message log, in order",
  request: { params: agentParams, query: pageQuerySchema },
  responses: { 200: json(messagePageSchema, 'One page of messages'), ...errorResponses(400, 404) },
});

export function agentRoutes(deps: Pick<Deps, 'sessions' | 'messages' | 'backgroundAgents'>) {
  const app = createRouteApp();
  const urlOf = (sessionId: string, agentId: string) => `/v1/sessions/${sessionId}/agents/${agentId}/messages`;

  app.openapi(list, async (c) => {
    const sessionId = c.req.valid('param').id;
    await deps.sessions.getForTenant(sessionId, c.get('tenantId'));
    const agents = await listSessionAgents(deps, sessionId);
    return c.json({ agents: agents.map((a) => ({ ...a, messagesUrl: urlOf(sessionId, a.agentId) })) }, 200);
  });

  app.openapi(messages, async (c) => {
    const { id: sessionId, agentId } = c.req.valid('param');
    const q = c.req.valid('query');
    await deps.sessions.getForTenant(sessionId, c.get('tenantId'));
    await getSessionAgent(deps, sessionId, agentId);
    const page = await deps.messages.page(agentLogId(sessionId, agentId), { limit: q.limit, cursor: q.cursor });
    return c.json(messagePageView(page), 200);
  });

  return app;
}
