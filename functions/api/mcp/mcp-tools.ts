import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { PERMISSION_MODES } from '../../permissions/types.ts';
import { messagePageView } from '../../session/session-view.ts';
import { openRemoteSession, type RemoteDeps } from '../remote/remote-sessions.ts';
import { interruptRunning, pendingAsks, remoteSession } from '../remote/remote-turns.ts';
import { remoteState, sessionDiff } from '../remote/remote-view.ts';
import { answerAndResume, pendingView, runPrompt, type McpCall } from './mcp-turns.ts';

const sessionId = z.string().min(1).max(200).describe('The session id (`ses_…`) create_session answered');

/** A tool's answer: the JSON as text (every client shows it) and as structured content. */
function answer(value: Record<string, unknown>) {
  return { content: [{ type: 'text' as const, text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

/** The MCP tools: each one step of the REST API's session and turn routes, for the caller's tenant. */
export function registerMcpTools(server: McpServer, deps: RemoteDeps, callOf: (extra: ProgressExtra) => McpCall): void {
  server.registerTool(
    'create_session',
    {
      description: 'Create a Stratus session (a sandboxed workspace the agent works in): empty, seeded with files, or cloned from a git URL.',
      inputSchema: {
        title: z.string().max(200).optional(),
        gitUrl: z.string().min(1).max(2048).optional().describe('https:// clone URL'),
        ref: z.string().min(1).max(255).optional().describe('Branch or tag of gitUrl (default: the remote default branch)'),
        files: z.record(z.string(), z.string()).optional().describe('Seed files: relative path → text'),
        permissionMode: z.enum(PERMISSION_MODES).optional().describe('`default` asks before commands and edits (answer with answer_permission)'),
      },
    },
    async (args, extra) => {
      const { tenantId } = callOf(extra);
      const git = args.gitUrl ? { url: args.gitUrl, ...(args.ref ? { ref: args.ref } : {}) } : undefined;
      const record = await openRemoteSession(deps, tenantId, { title: args.title, files: args.files, git, permissionMode: args.permissionMode });
      return answer({ sessionId: record.sessionId, workspace: record.workspace });
    },
  );
  registerTurnTools(server, deps, callOf);
  registerReadTools(server, deps, callOf);
}

export type ProgressExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

function registerTurnTools(server: McpServer, deps: RemoteDeps, callOf: (extra: ProgressExtra) => McpCall): void {
  server.registerTool(
    'run_prompt',
    {
      description:
        'Give the agent a prompt in a session. With wait (the default) the call lasts until the turn ends, sending progress notifications, and answers with its final answer; with wait: false it answers at once with the turn id (follow it with get_session).',
      inputSchema: { sessionId, prompt: z.string().min(1).max(200_000), wait: z.boolean().default(true) },
    },
    async (args, extra) => answer(await runPrompt(deps, callOf(extra), args)),
  );
  server.registerTool(
    'answer_permission',
    {
      description:
        'Allow or deny a tool call that waits for permission (get_session lists them). Without toolUseId every waiting call gets the answer. When none waits any more the turn resumes and this call follows it to its end, as run_prompt does.',
      inputSchema: {
        sessionId,
        toolUseId: z.string().min(1).max(256).optional(),
        decision: z.enum(['allow', 'deny']),
        message: z.string().min(1).max(10_000).optional().describe('Deny only: what to tell the agent instead'),
      },
    },
    async (args, extra) => answer(await answerAndResume(deps, callOf(extra), args)),
  );
  server.registerTool(
    'interrupt',
    { description: "Stop the session's running turn: running commands are killed and the turn ends `interrupted`.", inputSchema: { sessionId } },
    async (args, extra) => answer({ ...(await interruptRunning(deps, args.sessionId, callOf(extra).tenantId)) }),
  );
}

function registerReadTools(server: McpServer, deps: RemoteDeps, callOf: (extra: ProgressExtra) => McpCall): void {
  server.registerTool(
    'get_session',
    {
      description: "A session's state (working, input-required, completed, canceled, failed), its last turn and what waits for permission.",
      inputSchema: { sessionId },
    },
    async (args, extra) => {
      const record = await remoteSession(deps, args.sessionId, callOf(extra).tenantId);
      const pending = await pendingAsks(deps, record.sessionId);
      const running = remoteState(record, deps.clock()) === 'working' ? record.lease!.turnId : null;
      return answer({
        sessionId: record.sessionId,
        state: remoteState(record, deps.clock()),
        currentTurnId: running,
        lastTurn: record.lastTurn ?? null,
        pending: pending.map(pendingView),
      });
    },
  );
  server.registerTool(
    'get_messages',
    {
      description: "One page of the session's message log, oldest first (as GET /v1/sessions/{id}/messages).",
      inputSchema: { sessionId, cursor: z.string().max(2000).optional(), limit: z.number().int().min(1).max(100).default(50) },
    },
    async (args, extra) => {
      await deps.sessions.getForTenant(args.sessionId, callOf(extra).tenantId);
      return answer(messagePageView(await deps.messages.page(args.sessionId, { limit: args.limit, cursor: args.cursor })));
    },
  );
  server.registerTool(
    'get_diff',
    {
      description: "What the agent changed in the session's workspace since its first turn: per file the kind of change and a unified diff.",
      inputSchema: { sessionId },
    },
    async (args, extra) => answer(await sessionDiff(deps, await remoteSession(deps, args.sessionId, callOf(extra).tenantId))),
  );
}
