import type { SandboxSpec } from '../isolation/sandbox.ts';
import type { OpContext } from './op-context.ts';

/**
 * What a Bash command's sandbox is started with besides the command: the one definition that
 * Bash and warm (which starts that sandbox ahead) share, so a pre-started sandbox matches.
 */
export function bashSandboxSpec(ctx: OpContext): SandboxSpec {
  return {
    workspaceDir: ctx.paths.root,
    tmpDir: ctx.tmpDir,
    env: ctx.request.env,
    allowedDomains: ctx.request.network.allowedDomains,
    egressToken: ctx.request.network.egressToken,
    mailbox: ctx.remote,
  };
}
