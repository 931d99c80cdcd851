/**
 * What differs between a `dev` and a `prod` deployment. Everything else is the same code.
 * Each stage is its own stack (`Stratus-dev`, `Stratus-prod`); account and region come from
 * the CLI's credentials (CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION).
 */
export interface StageConfig {
  readonly name: 'dev' | 'prod';
  /** Prefix of every named resource (functions, tables, secrets, schedule group). */
  readonly prefix: string;
  /** Tables and secrets survive `cdk destroy`; tables refuse deletion. */
  readonly protectData: boolean;
  readonly api: {
    /** @default 1024 */
    readonly memoryMb: number;
    /** The Lambda maximum; long turns continue in a fresh invocation before it. */
    readonly timeoutSeconds: number;
  };
  readonly runner: {
    /** Commands like builds and test suites want memory; Lambda gives CPU in proportion. */
    readonly memoryMb: number;
    /** /tmp holds the warm workspace copy. @default 10240 (the Lambda maximum) */
    readonly ephemeralStorageMb: number;
    readonly timeoutSeconds: number;
    /** Repo-relative Dockerfile of the runner image (the build context is the repo root). */
    readonly dockerfile: string;
  };
  readonly cron: { readonly timeoutSeconds: number };
  /**
   * GitHub issue fixing: the GitHub App's id (not a secret; its private key is in Secrets
   * Manager) and the REST API root. Without an app id the worker needs a plain token instead,
   * which this stack does not provision. Runs need the egress proxy to reach GitHub.
   */
  readonly github: { readonly appId?: string; readonly apiUrl?: string; readonly workerTimeoutSeconds: number };
  /** The runner's network (docs/security.md, "Network egress in AWS"). */
  readonly network: {
    /** Availability zones the runner's isolated subnets span. */
    readonly maxAzs: number;
    /**
     * The egress proxy for sessions with `allowedDomains` and for git imports: one ARM Fargate
     * task (0.25 vCPU, 0.5 GB) with a public IPv4 address, about 12 USD a month at idle
     * (docs/deploy.md). Off: the runner has no internet at all, and the API refuses such
     * sessions and imports with `egress_unavailable`. @default false
     */
    readonly egressProxy: boolean;
    /** Repo-relative Dockerfile of the proxy image. */
    readonly egressProxyDockerfile: string;
  };
  readonly model: string;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  readonly logRetentionDays: 7 | 30 | 90 | 365;
  readonly bucketLifecycle: {
    /** Persisted tool results are re-readable by the model for this long. */
    readonly toolResultsDays: number;
    /** Overwritten or deleted objects (old workspace manifests, blobs removed by GC) are kept this long. */
    readonly noncurrentVersionsDays: number;
  };
}

const RUNNER_DOCKERFILE = 'sandbox-runner/Dockerfile';
const EGRESS_PROXY_DOCKERFILE = 'sandbox-runner/egress/Dockerfile';

export const STAGES: Record<StageConfig['name'], StageConfig> = {
  dev: {
    name: 'dev',
    prefix: 'stratus-dev',
    protectData: false,
    api: { memoryMb: 1024, timeoutSeconds: 900 },
    runner: { memoryMb: 2048, ephemeralStorageMb: 10_240, timeoutSeconds: 900, dockerfile: RUNNER_DOCKERFILE },
    cron: { timeoutSeconds: 900 },
    github: { workerTimeoutSeconds: 900 },
    network: { maxAzs: 2, egressProxy: false, egressProxyDockerfile: EGRESS_PROXY_DOCKERFILE },
    model: 'claude-sonnet-4-6',
    logLevel: 'debug',
    logRetentionDays: 7,
    bucketLifecycle: { toolResultsDays: 14, noncurrentVersionsDays: 3 },
  },
  prod: {
    name: 'prod',
    prefix: 'stratus-prod',
    protectData: true,
    api: { memoryMb: 1024, timeoutSeconds: 900 },
    runner: { memoryMb: 4096, ephemeralStorageMb: 10_240, timeoutSeconds: 900, dockerfile: RUNNER_DOCKERFILE },
    cron: { timeoutSeconds: 900 },
    github: { workerTimeoutSeconds: 900 },
    network: { maxAzs: 2, egressProxy: false, egressProxyDockerfile: EGRESS_PROXY_DOCKERFILE },
    model: 'claude-sonnet-4-6',
    logLevel: 'info',
    logRetentionDays: 90,
    bucketLifecycle: { toolResultsDays: 90, noncurrentVersionsDays: 30 },
  },
};
