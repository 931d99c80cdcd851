import { promises as fs } from 'node:fs';
import type { SandboxSpec } from './sandbox.ts';

/**
 * Everything a sandbox's start depends on that can differ between commands of one runner: the
 * directories it binds (by path and by identity, so a workspace copy removed and made again is
 * never served by a sandbox that still holds the old one), the variables and the allow-list.
 * Undefined when a directory is missing (nothing to start ahead). The cwd and the script are
 * handed over, so they are no part of it; the rest of a start (limits, egress mode, the
 * deployment's endpoints) is fixed per sandbox.
 */
export async function warmKey(spec: SandboxSpec): Promise<string | undefined> {
  const [workspace, tmp] = await Promise.all([identity(spec.workspaceDir), identity(spec.tmpDir)]);
  if (workspace === undefined || tmp === undefined) return undefined;
  return JSON.stringify({
    workspace: [spec.workspaceDir, workspace],
    tmp: [spec.tmpDir, tmp],
    env: Object.entries(spec.env),
    allowedDomains: spec.allowedDomains ?? [],
  });
}

async function identity(dir: string): Promise<string | undefined> {
  const st = await fs.stat(dir).catch(() => undefined);
  return st?.isDirectory() ? `${st.dev}:${st.ino}` : undefined;
}
