import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RecordedCall } from '../../../local/aws-call-log.ts';
import { checkCalls, type CoverageReport } from './check-calls.ts';

/**
 * The IAM coverage check of `npm test` (vitest globalSetup): before the suite, a fresh folder is
 * named in STRATUS_AWS_CALL_LOG, which every local stack the tests start (and its runner
 * processes) records its AWS calls into, one file per process; after the suite, every recorded
 * call is judged against the roles of the synthesized prod stack, and any call IAM would refuse
 * fails the run with the call and the statement missing.
 */
export default function setup(): () => Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'stratus-aws-calls-'));
  process.env.STRATUS_AWS_CALL_LOG = dir;
  return async () => {
    // Vitest reports a teardown's error without failing the run, and exits with process.exitCode
    // (also when the teardown outlasts teardownTimeout): the run fails unless the check passes.
    const before = process.exitCode;
    process.exitCode = 1;
    try {
      const calls = readCalls(dir);
      const report = calls.length > 0 ? await checkRecordedCalls(calls) : undefined;
      if (report) process.stdout.write(`${summary(report)}\n`);
      const failures = report ? failuresOf(report) : [];
      if (failures.length > 0) throw new Error(`IAM coverage: ${failures.length} AWS call(s) the deployed stack would refuse:\n${failures.join('\n')}`);
      process.exitCode = before;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

export function readCalls(dir: string): RecordedCall[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .flatMap((f) =>
      readFileSync(path.join(dir, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as RecordedCall),
    );
}

/** Checks calls against the prod stage with every optional part on (the GitHub worker). */
export async function checkRecordedCalls(calls: readonly RecordedCall[]): Promise<CoverageReport> {
  const { synthStage } = await import('../../infra/synth-stack.ts');
  const { templateIam } = await import('./template-iam.ts');
  const { LOCAL_BUCKET } = await import('../../../local/stack.ts');
  const s = synthStage('prod', (stage) => ({ ...stage, githubApp: true }));
  const iam = templateIam(s.template, { region: s.stack.region, account: s.stack.account });
  const prefix = prefixOf(iam);
  return checkCalls(calls, iam, { prefix, localBucket: LOCAL_BUCKET, bucket: iam.ref(s.id(s.stack.data.bucket)) });
}

/** The stage prefix: what the API function's name (`<prefix>-api`) starts with. */
function prefixOf(iam: { functionRoles: Map<string, string> }): string {
  const api = [...iam.functionRoles.keys()].find((name) => name.endsWith('-api'));
  if (!api) throw new Error('IAM coverage: the template has no API function to take the stage prefix from.');
  return api.slice(0, -'-api'.length);
}

export function failuresOf(report: CoverageReport): string[] {
  return [
    ...report.denied.map(
      ({ call, reason }) =>
        `  ${call.function ?? '-'} as ${call.role}${call.sessionPolicy ? ' (with its session policy)' : ''}: ${call.action} ${call.resource}${contextText(call.context)} — ${reason}`,
    ),
    ...report.unmapped.map((u) => `  unmapped SDK call ${u}: say in local/aws-call-iam.ts which IAM actions it needs`),
    ...report.unknownPrincipals.map((p) => `  no counterpart in the template for ${p}`),
  ];
}

export function summary(report: CoverageReport): string {
  const roles = new Set(report.checked.map((c) => c.role)).size;
  return `IAM coverage: ${report.distinctRoleActionResource} distinct (role, action, resource) calls checked across ${roles} roles (${report.checked.length} with their condition keys and session policies); ${report.denied.length} denied, ${report.unmapped.length} unmapped, ${report.unknownPrincipals.length} unknown principals; ${report.outsideFunctions} calls outside any function not judged.`;
}

function contextText(context: Record<string, string>): string {
  const entries = Object.entries(context);
  return entries.length ? ` (${entries.map(([k, v]) => `${k}=${v}`).join(', ')})` : '';
}
