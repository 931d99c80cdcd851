import { getDenialReasons, runSimulation } from '@cloud-copilot/iam-simulate';
import { LOCAL_ACCOUNT } from '../../../local/aws-call-iam.ts';
import type { RecordedCall } from '../../../local/aws-call-log.ts';
import type { PolicyDocument, TemplateIam } from './template-iam.ts';

/**
 * Judges recorded AWS calls (local/aws-call-log.ts) as IAM would in the deployed stack. Local
 * names are the deployed ones with `stratus` for the stage's prefix (docs/local-stack.md), so a
 * call is carried over by renaming: `table/stratus-sessions` → `table/stratus-prod-sessions`,
 * function `stratus-api` → `stratus-prod-api` and its role, the local bucket → the stack's.
 */
export interface Naming {
  /** The stage's prefix in the template (`stratus-prod`). */
  prefix: string;
  localBucket: string;
  /** The stack's bucket name as the template resolves it. */
  bucket: string;
}

export interface CheckedCall {
  function: string | null;
  role: string;
  action: string;
  resource: string;
  context: Record<string, string>;
  sessionPolicy?: PolicyDocument;
}

export interface Denial {
  call: CheckedCall;
  /** Which policy refused it, and the statement that would allow it. */
  reason: string;
}

export interface CoverageReport {
  /** Distinct calls judged (by principal, action, resource, condition keys). */
  checked: CheckedCall[];
  /** Distinct (role, action, resource) among them: the figure the closing line reports. */
  distinctRoleActionResource: number;
  denied: Denial[];
  /** Calls the recorder could not map to IAM actions (local/aws-call-iam.ts needs an entry). */
  unmapped: string[];
  /** Functions or roles with no counterpart in the template. */
  unknownPrincipals: string[];
  /** Calls made outside every function (a test's own set-up or checks through the stack's clients): not judged. */
  outsideFunctions: number;
}

const LOCAL_PREFIX = 'stratus';

export async function checkCalls(calls: readonly RecordedCall[], iam: TemplateIam, naming: Naming): Promise<CoverageReport> {
  const rename = renamer(iam, naming);
  const report: CoverageReport = { checked: [], distinctRoleActionResource: 0, denied: [], unmapped: [], unknownPrincipals: [], outsideFunctions: 0 };
  const seen = new Set<string>();
  for (const call of calls) {
    if ('unmapped' in call) {
      report.unmapped.push(`${call.function ?? '(no function)'}: ${call.unmapped}`);
      continue;
    }
    const principal = principalOf(call, iam, rename);
    if (principal === 'outside') report.outsideFunctions++;
    else if ('unknown' in principal) report.unknownPrincipals.push(principal.unknown);
    else {
      const checked: CheckedCall = {
        function: call.function,
        role: iam.roleName(principal.roleId),
        action: call.action,
        resource: rename.arn(call.resource),
        context: call.context,
        ...principal.session,
      };
      const key = JSON.stringify(checked);
      if (seen.has(key)) continue;
      seen.add(key);
      report.checked.push(checked);
      const reason = await judge(checked, principal.roleId, iam);
      if (reason) report.denied.push({ call: checked, reason });
    }
  }
  report.distinctRoleActionResource = new Set(report.checked.map((c) => `${c.role} ${c.action} ${c.resource}`)).size;
  report.unmapped = [...new Set(report.unmapped)];
  report.unknownPrincipals = [...new Set(report.unknownPrincipals)];
  return report;
}

type Principal = 'outside' | { unknown: string } | { roleId: string; session: { sessionPolicy?: PolicyDocument } };

function principalOf(call: RecordedCall, iam: TemplateIam, rename: ReturnType<typeof renamer>): Principal {
  if (call.function === null) return 'outside';
  if (call.assumedRole) {
    const roleId = iam.rolesByName.get(rename.name(call.assumedRole.role));
    if (!roleId) return { unknown: `role ${call.assumedRole.role} (expected ${rename.name(call.assumedRole.role)} in the template)` };
    return { roleId, session: { sessionPolicy: rename.policy(call.assumedRole.sessionPolicy as PolicyDocument) } };
  }
  const roleId = iam.functionRoles.get(rename.name(call.function));
  if (!roleId) return { unknown: `function ${call.function} (expected ${rename.name(call.function)} in the template)` };
  return { roleId, session: {} };
}

/** Undefined when IAM allows the call; otherwise why not, with the statement that is missing. */
async function judge(call: CheckedCall, roleId: string, iam: TemplateIam): Promise<string | undefined> {
  const result = await runSimulation(
    {
      request: {
        principal: `arn:aws:sts::${iam.account}:assumed-role/${call.role}/session`,
        action: call.action,
        resource: { resource: call.resource, accountId: iam.account },
        // The SDK always uses TLS: the bucket policy's deny of plain HTTP does not apply.
        contextVariables: { 'aws:SecureTransport': 'true', ...call.context },
      },
      identityPolicies: iam.policiesOf(roleId),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(call.sessionPolicy ? { sessionPolicy: call.sessionPolicy } : {}),
      ...resourcePolicyFor(call, iam),
    },
    {},
  );
  if (result.resultType === 'error') return `the simulator refused the request: ${JSON.stringify(result.errors)}`;
  if (result.overallResult === 'Allowed') return undefined;
  const analysis = result.resultType === 'single' ? result.result.analysis : undefined;
  const by = analysis ? getDenialReasons(analysis).map((d) => `${d.policyType} policy (${d.denialType.toLowerCase()})`) : [];
  // The simulator's reasons leave out a session policy that allows nothing of the request: say so.
  if (call.sessionPolicy && analysis?.sessionAnalysis && analysis.sessionAnalysis.result !== 'Allowed')
    by.unshift(`session policy (${analysis.sessionAnalysis.result})`);
  const condition = Object.keys(call.context).length ? `, "Condition": { "StringLike": ${JSON.stringify(call.context)} }` : '';
  return `${result.overallResult} by ${by.join(', ') || 'policy'}; missing: { "Effect": "Allow", "Action": "${call.action}", "Resource": "${call.resource}"${condition} }`;
}

function resourcePolicyFor(call: CheckedCall, iam: TemplateIam): { resourcePolicy?: PolicyDocument } {
  if (call.action === 'sts:AssumeRole') {
    const target = iam.rolesByName.get(call.resource.split(':role/')[1] ?? '');
    return target ? { resourcePolicy: iam.trustPolicyOf(target) } : {};
  }
  if (call.resource.startsWith('arn:aws:s3:::')) {
    const policy = iam.bucketPolicy(call.resource.slice('arn:aws:s3:::'.length).split('/')[0]!);
    return policy ? { resourcePolicy: policy } : {};
  }
  return {};
}

/** Local names and ARNs → the template's. */
function renamer(iam: TemplateIam, naming: Naming) {
  const name = (local: string) => (local.startsWith(`${LOCAL_PREFIX}-`) ? `${naming.prefix}${local.slice(LOCAL_PREFIX.length)}` : local);
  const arn = (local: string): string => {
    const parts = local.split(':');
    if (parts.length < 6 || parts[0] !== 'arn') return local;
    const [, partition, service, region, account] = parts as [string, string, string, string, string];
    const rest = parts.slice(5).join(':');
    const place = (r: string, a: string) => [r && iam.region, a === LOCAL_ACCOUNT ? iam.account : a];
    const [r, a] = place(region, account);
    return ['arn', partition, service, r, a, renameResource(service, rest)].join(':');
  };
  const renameResource = (service: string, rest: string): string => {
    if (service === 's3') {
      const [bucket, ...key] = rest.split('/');
      return [bucket === naming.localBucket ? naming.bucket : bucket, ...key].join('/');
    }
    if (service === 'lambda') return rest.replace(/^function:([^:]+)/, (_, n: string) => `function:${name(n)}`);
    return rest.replace(/^(table|role|schedule)\/([^/]+)/, (_, kind: string, n: string) => `${kind}/${name(n)}`);
  };
  const policy = (doc: PolicyDocument): PolicyDocument => ({
    ...doc,
    Statement: doc.Statement.map((st) => ({ ...st, ...(st.Resource ? { Resource: ([] as string[]).concat(st.Resource as string | string[]).map(arn) } : {}) })),
  });
  return { name, arn, policy };
}
