import { spawn } from 'node:child_process';
import type { MessagesRequest } from '../local/scripted-model/script.ts';

/**
 * A request of the reference's main loop (the one that carries the tools); its side requests
 * (titles and such) carry none.
 */
export function isMainLoopRequest(request: MessagesRequest): boolean {
  return (request.tools ?? []).some((t) => t.name === 'Bash');
}

/**
 * Runs Claude Code once in print mode in `cwd` against a model endpoint, with a throw-away home
 * and its own traffic off (docs/tools.md, "Observing the reference"); resolves when it exits.
 * Permission checks are skipped unless `checkPermissions` is set (a case that carries rules).
 */
export async function runClaudeCode(
  claude: string,
  opts: { cwd: string; home: string; modelUrl: string; prompt: string; extraArgs?: string[]; env?: Record<string, string>; checkPermissions?: boolean },
): Promise<void> {
  const permissions = opts.checkPermissions ? [] : ['--dangerously-skip-permissions'];
  const child = spawn(claude, ['-p', opts.prompt, '--output-format', 'stream-json', '--verbose', ...permissions, ...(opts.extraArgs ?? [])], {
    cwd: opts.cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: opts.home,
      ANTHROPIC_BASE_URL: opts.modelUrl,
      ANTHROPIC_API_KEY: 'reference',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      IS_SANDBOX: '1',
      ...opts.env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await new Promise((resolve) => child.once('close', resolve));
}
