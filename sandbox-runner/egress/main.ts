import { startEgressProxy } from './egress-proxy.ts';

/**
 * Entry point of the egress proxy container (egress/Dockerfile; an ECS Fargate service when the
 * stage enables `egressProxy`). STRATUS_EGRESS_TOKEN_KEY is injected by ECS from Secrets
 * Manager; PORT defaults to 3128. Every decision is one JSON line on stdout (CloudWatch Logs).
 */
const key = process.env.STRATUS_EGRESS_TOKEN_KEY;
if (!key) throw new Error('STRATUS_EGRESS_TOKEN_KEY is not set; the CDK app injects it from Secrets Manager.');
const proxy = await startEgressProxy({
  key,
  port: Number(process.env.PORT || 3128),
  log: (entry) => process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`),
});
process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), msg: 'egress proxy listening', port: proxy.port })}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void proxy.close().then(() => process.exit(0)));
