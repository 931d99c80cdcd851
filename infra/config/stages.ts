import { DEFAULT_MODELS, type ModelProvider } from '../../functions/model/model-names.ts';

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
    /**
     * Concurrent invocations kept for (and capping) the API function: each streaming turn holds
     * one for its whole length. Unset: the account's unreserved pool (docs/deploy.md, "Concurrency").
     */
    readonly reservedConcurrency?: number;
    /** Browser origins allowed to call the Function URL (CORS). Unset: no CORS headers. Override with `-c corsOrigins=https://a,https://b`. */
    readonly corsOrigins?: readonly string[];
    /**
     * A custom domain: CloudFront (with origin access control) in front of the Function URL,
     * which then only answers the distribution (docs/deploy.md, "Custom domain"). The certificate
     * must be in us-east-1. Unset: clients call the Function URL. Set with
     * `-c domainName=agents.example.com -c certificateArn=arn:aws:acm:us-east-1:…`.
     */
    readonly domain?: { readonly names: readonly string[]; readonly certificateArn: string };
  };
  readonly runner: {
    /** Commands like builds and test suites want memory; Lambda gives CPU in proportion. */
    readonly memoryMb: number;
    /** /tmp holds the warm workspace copy. @default 10240 (the Lambda maximum) */
    readonly ephemeralStorageMb: number;
    readonly timeoutSeconds: number;
    /** Repo-relative Dockerfile of the runner image (the build context is the repo root). */
    readonly dockerfile: string;
    /** Caps runner environments across all workspaces. Unset: the unreserved pool. */
    readonly reservedConcurrency?: number;
  };
  readonly cron: { readonly timeoutSeconds: number; readonly reservedConcurrency?: number };
  /**
   * GitHub issue fixing (the webhook route, the worker function and the App's two secrets):
   * none of it exists unless this is on. @default false
   */
  readonly githubApp: boolean;
  /**
   * The GitHub App's id (not a secret; its private key is in Secrets Manager) and the REST API
   * root. Runs clone and push through the git function outside the runner's VPC, with or
   * without the egress proxy (docs/security.md, "Git and registry traffic at $0 idle").
   */
  readonly github: { readonly appId?: string; readonly apiUrl?: string; readonly workerTimeoutSeconds: number };
  /** List prices of the model in USD per million tokens, for the dashboard's cost estimate. */
  readonly modelPrice: { readonly inputPerMTok: number; readonly outputPerMTok: number };
  /** The runner's network (docs/security.md, "Network egress in AWS"). */
  readonly network: {
    /** Availability zones the runner's isolated subnets span. */
    readonly maxAzs: number;
    /**
     * The egress proxy for sessions with `allowedDomains` and for git imports: one ARM Fargate
     * task (0.25 vCPU, 0.5 GB) with a public IPv4 address, about 12 USD a month at idle
     * (docs/deploy.md). Off: the runner has no internet route; commands' allow-listed requests
     * go through the S3 mailbox and the egress forwarder (STRATUS_EGRESS=mailbox, $0 idle), and
     * the API refuses git imports with `egress_unavailable`. @default false
     */
    readonly egressProxy: boolean;
    /** Repo-relative Dockerfile of the proxy image. */
    readonly egressProxyDockerfile: string;
  };
  readonly model: {
    /**
     * `anthropic`: the Anthropic API with a key from Secrets Manager. `bedrock`: Amazon Bedrock
     * with the functions' own role; no key secret exists (docs/deploy.md, "Model provider").
     */
    readonly provider: ModelProvider;
    /** Model (Bedrock: model or inference profile id). Override with `-c model=...`. */
    readonly name: string;
    /** The model to switch to when the primary stays overloaded. Override with `-c fallbackModel=...`. */
    readonly fallback?: string;
  };
  /**
   * OpenTelemetry export of the turn engines' spans (docs/architecture.md, "Traces"), beside
   * X-Ray: `otlpEndpoint` becomes STRATUS_OTEL_TRACES_ENDPOINT, `otlpHeaders` (comma-separated
   * `name=value`, e.g. a collector's auth) STRATUS_OTEL_HEADERS. Header values are plain
   * environment variables, readable by whoever may read the functions' configuration. Unset: off.
   * Override with `-c otelTracesEndpoint=<url> -c otelHeaders=<name=value,…>`.
   */
  readonly traces?: { readonly otlpEndpoint: string; readonly otlpHeaders?: string };
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Share of invocations logged at debug whatever `logLevel` (Powertools log sampling), 0–1. */
  readonly logSampleRate: number;
  readonly logRetentionDays: 7 | 30 | 90 | 365;
  /**
   * Run the Lambda functions with `NODE_OPTIONS=--enable-source-maps`: logged stack traces name
   * the TypeScript files and lines instead of positions in the minified bundle, at a price every
   * cold start pays (Node reads and indexes each loaded chunk's `.map`; `npm run bench -- bundle`
   * prints the import with and without). Off, the `.map` files still ship beside the bundle to
   * map a logged position by hand (docs/deploy.md, "Cold start and bundle size").
   */
  readonly sourceMaps: boolean;
  readonly bucketLifecycle: {
    /** Persisted tool results are re-readable by the model for this long. */
    readonly toolResultsDays: number;
    /** Overwritten or deleted objects (old workspace manifests, blobs removed by GC) are kept this long. */
    readonly noncurrentVersionsDays: number;
  };
}

const RUNNER_DOCKERFILE = 'sandbox-runner/Dockerfile';
const EGRESS_PROXY_DOCKERFILE = 'sandbox-runner/egress/Dockerfile';
/** Sonnet-class list prices (docs/deploy.md, "What it costs"); edit with the model. */
const SONNET_PRICE = { inputPerMTok: 3, outputPerMTok: 15 };

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
    model: { provider: 'anthropic', name: DEFAULT_MODELS.anthropic },
    githubApp: false,
    modelPrice: SONNET_PRICE,
    logLevel: 'debug',
    logSampleRate: 0,
    logRetentionDays: 7,
    sourceMaps: true,
    bucketLifecycle: { toolResultsDays: 14, noncurrentVersionsDays: 3 },
  },
  prod: {
    name: 'prod',
    prefix: 'stratus-prod',
    protectData: true,
    // A runaway client cannot take the account's whole pool, and turns always find room.
    api: { memoryMb: 1024, timeoutSeconds: 900, reservedConcurrency: 100 },
    // One tenant's burst of tool calls cannot take the account's whole pool (the API's 100 turns each wait on one runner call at a time, sub-agents beside them).
    runner: { memoryMb: 4096, ephemeralStorageMb: 10_240, timeoutSeconds: 900, dockerfile: RUNNER_DOCKERFILE, reservedConcurrency: 200 },
    cron: { timeoutSeconds: 900, reservedConcurrency: 10 },
    github: { workerTimeoutSeconds: 900 },
    network: { maxAzs: 2, egressProxy: false, egressProxyDockerfile: EGRESS_PROXY_DOCKERFILE },
    model: { provider: 'anthropic', name: DEFAULT_MODELS.anthropic },
    githubApp: false,
    modelPrice: SONNET_PRICE,
    logLevel: 'info',
    logSampleRate: 0.01,
    logRetentionDays: 90,
    sourceMaps: true,
    bucketLifecycle: { toolResultsDays: 90, noncurrentVersionsDays: 30 },
  },
};
