import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { iamRequestsOf, LOCAL_ACCOUNT, type IamRequest } from './aws-call-iam.ts';
import { readLocalSessionToken, type LocalAssumedRole } from './local-sts.ts';

/**
 * One AWS call as IAM would judge it, written by the local stack when STRATUS_AWS_CALL_LOG names
 * a folder (docs/local-stack.md, "Recording AWS calls"): which function's code made it, under
 * which principal (the function's own role, or a role its code assumed with a session policy),
 * and the IAM request(s) it needs. test/support/iam-coverage.ts checks them against the roles of
 * the synthesized template.
 */
export type RecordedCall = {
  /** The function whose code made the call (its local name); null outside every function (a test's own set-up). */
  function: string | null;
  /** Set when the call was signed with credentials minted for a role (local-sts.ts). */
  assumedRole?: LocalAssumedRole;
} & (IamRequest | { unmapped: string });

const scope = new AsyncLocalStorage<string>();

/** Runs `work` as the named function: the AWS calls it makes (and the work it starts) are that function's. */
export function runAsFunction<T>(name: string, work: () => T): T {
  return scope.run(name, work);
}

/** The function whose code is running (runAsFunction), or null outside every function. */
export function currentFunction(): string | null {
  return scope.getStore() ?? null;
}

export interface AwsCallLog {
  record(call: RecordedCall): void;
  /** Installs the recording middleware on an AWS SDK v3 client; returns the client. */
  observe<T>(client: T): T;
}

/**
 * A call log appending to a file of its own in `dir` (one per process, so the stack, its runner
 * processes and every test worker write side by side). Each distinct call is written once.
 */
export function createAwsCallLog(dir: string): AwsCallLog {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${process.pid}-${randomBytes(6).toString('hex')}.jsonl`);
  const seen = new Set<string>();
  const log: AwsCallLog = {
    record(call) {
      const line = JSON.stringify(call);
      if (seen.has(line)) return;
      seen.add(line);
      appendFileSync(file, `${line}\n`);
    },
    observe: (client) => (installRecorder(client as unknown as ObservableClient, log), client),
  };
  return log;
}

type Middleware = (
  next: (args: { input: object }) => Promise<unknown>,
  context: { clientName?: string; commandName?: string },
) => (args: { input: object }) => Promise<unknown>;
interface ObservableClient {
  middlewareStack: { add(middleware: Middleware, options: { step: 'initialize'; name: string }): void };
  config: { credentials: () => Promise<{ sessionToken?: string }>; region: () => Promise<string> };
}

/** Before the call is sent (a call AWS would refuse is still a call), its IAM requests are recorded. */
function installRecorder(client: ObservableClient, log: AwsCallLog): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const [credentials, region] = await Promise.all([client.config.credentials(), client.config.region()]);
      const assumedRole = readLocalSessionToken(credentials.sessionToken);
      const who = { function: currentFunction(), ...(assumedRole ? { assumedRole } : {}) };
      const mapped = iamRequestsOf(context.clientName ?? '?', context.commandName ?? '?', args.input as Record<string, unknown>, {
        region,
        account: LOCAL_ACCOUNT,
      });
      if ('unmapped' in mapped) log.record({ ...who, unmapped: mapped.unmapped });
      else for (const request of mapped.requests) log.record({ ...who, ...request });
      return next(args);
    },
    { step: 'initialize', name: 'stratusAwsCallLog' },
  );
}
