import { fileURLToPath } from 'node:url';
import { startServiceProcess, type EmbeddedServer } from './service-process.ts';
import { LOCAL_CREDENTIALS } from './local-credentials.ts';
import type { SigningCredentials } from './sigv4-verify.ts';

export type { EmbeddedServer } from './service-process.ts';

const ENTRY = fileURLToPath(new URL('./dynamo-process.ts', import.meta.url));

/**
 * A DynamoDB-protocol server (dynalite, LevelDB on disk) so the real DynamoDB client runs
 * against real conditional writes, pagination and the 400 KB item limit. Our table design needs
 * no transactions, which dynalite lacks (docs/local-stack.md). Every call must be signed with
 * `credentials` (default LOCAL_CREDENTIALS), which dynalite alone never checks.
 *
 * It runs in a child process, as DynamoDB is a separate service in AWS: LevelDB's native memory
 * and dynalite's request work stay out of the API process, whose memory the soak benchmark
 * measures (docs/workspaces.md), and out of its event loop. The child ends with its parent.
 */
export async function startDynamoServer(opts: { dir: string; port?: number; credentials?: SigningCredentials }): Promise<EmbeddedServer> {
  const args = { dir: opts.dir, port: opts.port, credentials: opts.credentials ?? LOCAL_CREDENTIALS };
  return startServiceProcess({ name: 'DynamoDB stand-in', entry: ENTRY, args });
}
