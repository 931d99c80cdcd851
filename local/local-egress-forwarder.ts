import { createEgressForwarderHandler } from '../functions/handlers/egress-forwarder.ts';
import { createOutboundFetch } from '../functions/outbound/outbound-fetch.ts';
import { createOutboundPolicy } from '../functions/outbound/outbound-policy.ts';
import type { StratusConfig } from '../functions/deps/config.ts';
import { EGRESS_REQUEST_SUFFIX } from '../sandbox-runner/common/egress-mailbox.ts';
import { WORKSPACES_PREFIX } from '../sandbox-runner/common/workspace-prefix.ts';
import { createS3ClientFactory } from '../sandbox-runner/s3-client.ts';
import { runAsFunction } from './aws-call-log.ts';
import type { LocalFunction } from './lambda-invoke-server.ts';
import type { S3NotificationRule } from './s3-notifications.ts';

/** The egress forwarder's local name: the deployed `stratus-{stage}-egress-forwarder` with the local prefix. */
export const EGRESS_FORWARDER_FUNCTION = 'stratus-egress-forwarder';

/** The biggest answer the local forwarder relays, as the deployed one (functions/handlers/egress-forwarder.ts). */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/**
 * The S3 stand-in's notification for the egress mailbox, as the CDK app filters it: request
 * objects under `workspaces/` (infra/constructs/egress-forwarder-function.ts).
 */
export function egressMailboxNotification(lambdaUrl: string): S3NotificationRule {
  return { prefix: WORKSPACES_PREFIX, suffix: EGRESS_REQUEST_SUFFIX, lambdaUrl, functionName: EGRESS_FORWARDER_FUNCTION };
}

/**
 * The egress forwarder as the local stack runs it in the `mailbox` egress mode: the deployed
 * handler with the stand-in's S3 and the stack's outbound policy, so loopback registries named
 * in STRATUS_PRIVATE_NETWORK_ALLOW are reachable, as they are for every outbound call locally,
 * and the stack's own services never are.
 */
export function localEgressForwarder(config: StratusConfig, observe: <T>(client: T) => T = (client) => client): LocalFunction {
  const s3 = observe(createS3ClientFactory({ region: config.region, endpoint: config.endpoints.s3 })({ ...config.localCredentials! }));
  const standIns = Object.values(config.endpoints).filter((e): e is string => typeof e === 'string');
  const policy = createOutboundPolicy({
    privateNetworkAllow: config.outbound.privateNetworkAllow,
    ownEndpoints: [...standIns, ...config.outbound.ownEndpoints],
  });
  const handler = createEgressForwarderHandler(
    { STRATUS_BUCKET: config.bucket },
    { s3: async () => s3, fetch: createOutboundFetch(policy, { maxResponseBytes: MAX_RESPONSE_BYTES }) },
  );
  // Its S3 calls are recorded as the forwarder's (aws-call-log.ts), for the IAM coverage check.
  return (event) => runAsFunction(EGRESS_FORWARDER_FUNCTION, () => handler(event as Parameters<typeof handler>[0]));
}
