import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startMcpDemoServer } from '../local/mcp-demo-server.ts';
import { startScriptedModelServer } from '../local/scripted-model/server.ts';
import type { MessagesRequest, ScriptedBlock } from '../local/scripted-model/script.ts';
import { parityCaseSchema, parityFileLine, resultLines, type ParityCase } from './parity-case.ts';
import { isMainLoopRequest, runClaudeCode } from './reference-claude.ts';

/**
 * `npm run --silent parity-reference -- CASE.json /path/to/node_modules/.bin/claude`: runs the
 * same case through Claude Code (installed separately, e.g. 2.1.88 in a scratch folder) against
 * the scripted model server and prints its tool_results in `npm run parity`'s format, so the two
 * can be diffed (including the `filesAfter` bytes). The case's files go to a temp dir that stands
 * in for /workspace.
 */
/** A case's rules go to a settings file outside the workspace (so the case's files stay its own); its mode to the flag. */
function permissionArgs(kase: ParityCase, home: string): string[] {
  const args: string[] = [];
  if (kase.permissions) {
    const settings = path.join(home, 'parity-settings.json');
    writeFileSync(settings, JSON.stringify({ permissions: kase.permissions }));
    args.push('--settings', settings);
  }
  if (kase.permissionMode) args.push('--permission-mode', kase.permissionMode);
  return args;
}

const [file, claude] = process.argv.slice(2);
if (!file || !claude) {
  console.error('usage: npm run --silent parity-reference -- CASE.json /path/to/claude');
  process.exit(2);
}
const kase = parityCaseSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'parity-ref-ws-')));
const home = mkdtempSync(path.join(tmpdir(), 'parity-ref-home-'));
for (const [rel, content] of Object.entries(kase.files)) {
  const target = path.join(dir, rel);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, typeof content === 'string' ? content : Buffer.from(content.base64, 'base64'));
}
const swap = (value: unknown, from: string, to: string): unknown => {
  if (typeof value === 'string') return value.split(from).join(to);
  if (Array.isArray(value)) return value.map((v) => swap(v, from, to));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, swap(v, from, to)]));
  return value;
};
const steps = swap(kase.steps, '/workspace', dir) as ScriptedBlock[][];
let next = 0;
let last: MessagesRequest | undefined;
// Only the main loop's requests carry the tools; side requests (titles and such) get a short text.
const server = await startScriptedModelServer({
  brain: (request) => {
    if (!isMainLoopRequest(request)) return { content: [{ type: 'text', text: 'ok' }] };
    last = request;
    const step = steps[next++];
    return { content: step ?? [{ type: 'text', text: 'Done.' }] };
  },
});
const mcp = kase.mcpServer ? await startMcpDemoServer() : undefined;
try {
  const extraArgs = [
    ...(mcp ? ['--mcp-config', JSON.stringify({ mcpServers: { tracker: { type: 'http', url: mcp.url } } })] : []),
    ...permissionArgs(kase, home),
  ];
  // The reference keeps ToolSearch off for a model endpoint that is not Anthropic's own unless told otherwise.
  const env = { ...(mcp ? { ENABLE_TOOL_SEARCH: 'true' } : {}), ...(kase.agentTeams ? { CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1' } : {}) };
  const checkPermissions = kase.permissions !== undefined || kase.permissionMode !== undefined;
  await runClaudeCode(claude, { cwd: dir, home, modelUrl: server.url, prompt: 'Run the parity case.', extraArgs, env, checkPermissions });
  for (const line of resultLines(last?.messages ?? [], { texts: kase.texts })) console.log(JSON.stringify(swap(line, dir, '/workspace')));
  for (const rel of kase.filesAfter) {
    const target = path.join(dir, rel);
    console.log(JSON.stringify(parityFileLine(rel, existsSync(target) ? readFileSync(target) : undefined)));
  }
} finally {
  await mcp?.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
