import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startMcpDemoServer } from '../local/mcp-demo-server.ts';
import { startLocalStack } from '../local/stack.ts';
import { createParitySession, parityCaseSchema, parityFileLine, readParityFile, parityTurnLines, type ParityCaseOutput } from './parity-case.ts';

/**
 * `npm run parity -- CASE.json`: runs a case's scripted tool calls through the real Stratus path
 * (API → turn engine → runner, scripted model server) and prints one JSON line per tool_result,
 * then one per file named in `filesAfter` with its exact bytes.
 */
function mcpSettings(mcp: { url: string } | undefined) {
  return mcp ? { mcpServers: { tracker: { type: 'http', url: mcp.url } } } : {};
}

/** A case with rules runs as the reference's print mode does: the rules, its mode (else `default`), and nobody to ask. */
function permissionSettings(kase: ParityCaseOutput) {
  if (kase.permissions === undefined && kase.permissionMode === undefined) return {};
  return { rules: kase.permissions ?? {}, permissionMode: kase.permissionMode ?? 'default', unattended: true };
}

const file = process.argv[2];
if (!file) {
  console.error('usage: npm run parity -- CASE.json');
  process.exit(2);
}
const kase = parityCaseSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
const dataDir = mkdtempSync(path.join(tmpdir(), 'stratus-parity-'));
const mcp = kase.mcpServer ? await startMcpDemoServer() : undefined;
const stack = await startLocalStack({
  dataDir,
  brain: () => ({ error: { status: 500, type: 'api_error', message: 'parity case exhausted' } }),
  turn: { maxModelCalls: kase.steps.length + 2 },
  ...(kase.webSearch ? { model: { webSearch: true } } : {}),
  logLevel: 'error',
  // The operator lets sessions reach the demo MCP server on loopback (STRATUS_PRIVATE_NETWORK_ALLOW).
  ...(mcp ? { settings: { model: {}, turn: {}, api: {}, observability: {}, outbound: { privateNetworkAllow: [`127.0.0.1:${mcp.port}`] } } } : {}),
});
try {
  const settings = { ...mcpSettings(mcp), ...permissionSettings(kase) };
  const sessionId = await createParitySession(stack, kase.files, settings);
  for (const line of await parityTurnLines(stack, sessionId, kase.steps, kase.texts)) console.log(JSON.stringify(line));
  for (const rel of kase.filesAfter) console.log(JSON.stringify(parityFileLine(rel, await readParityFile(stack, sessionId, rel))));
} finally {
  await mcp?.close();
  await stack.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
