import { Duration, IgnoreMode, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as servicediscovery from 'aws-cdk-lib/aws-servicediscovery';
import { Construct } from 'constructs';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './bundle-options.ts';

export interface EgressProxyProps {
  readonly prefix: string;
  readonly vpc: ec2.IVpc;
  /** The runner's security group: the only one the proxy admits, and the only place it may go besides S3. */
  readonly runnerSecurityGroup: ec2.SecurityGroup;
  /** Repo-relative Dockerfile of the proxy image (the build context is the repo root). */
  readonly dockerfile: string;
  readonly logRetentionDays: logs.RetentionDays;
  readonly protectData: boolean;
}

export const EGRESS_PROXY_PORT = 3128;

/** Files the proxy image may see (as for the runner image: sources and the lockfile). */
const IMAGE_CONTEXT = ['*', '!package.json', '!package-lock.json', '!tsconfig.json', '!sandbox-runner'];

/**
 * The optional egress path for sessions with allowed network domains: the allow-list proxy
 * (sandbox-runner/egress/) as one ARM Fargate task in a public subnet with a public IP (no NAT
 * gateway needed), registered in a private Cloud Map namespace as `egress.<prefix>.internal`.
 * The runner's security group may reach it on 3128 and nothing else but S3, and the runner's
 * subnets have no route out, so a command cannot go around it. It admits a request only with a
 * token the API or cron function signed for that session's list (the key is the secret below,
 * which the runner never sees), and never reaches a non-public address.
 */
export class EgressProxy extends Construct {
  readonly service: ecs.FargateService;
  readonly securityGroup: ec2.SecurityGroup;
  readonly tokenKey: secretsmanager.Secret;
  readonly namespace: servicediscovery.PrivateDnsNamespace;
  readonly cluster: ecs.Cluster;
  readonly taskDefinition: ecs.FargateTaskDefinition;
  /** `http://egress.<prefix>.internal:3128`, for the runner's STRATUS_EGRESS_PROXY. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: EgressProxyProps) {
    super(scope, id);
    if (!existsSync(path.join(REPO_ROOT, props.dockerfile))) {
      throw new Error(`The egress proxy image needs ${props.dockerfile} (relative to ${REPO_ROOT}); it does not exist.`);
    }
    this.tokenKey = new secretsmanager.Secret(this, 'TokenKey', {
      secretName: `${props.prefix}/egress-token-key`,
      description: 'HMAC key of egress tokens: the API and cron functions sign with it, the egress proxy verifies.',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: props.protectData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    this.securityGroup = this.proxySecurityGroup(props);

    this.cluster = new ecs.Cluster(this, 'Cluster', { vpc: props.vpc, containerInsightsV2: ecs.ContainerInsights.DISABLED });
    this.namespace = new servicediscovery.PrivateDnsNamespace(this, 'Namespace', { name: `${props.prefix}.internal`, vpc: props.vpc });
    this.taskDefinition = this.proxyTask(props);
    this.service = new ecs.FargateService(this, 'Service', {
      cluster: this.cluster,
      taskDefinition: this.taskDefinition,
      desiredCount: 1,
      // A replacement starts before the old task stops, so deploys keep the path open.
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
      assignPublicIp: true,
      vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC },
      securityGroups: [this.securityGroup],
      cloudMapOptions: { cloudMapNamespace: this.namespace, name: 'egress', dnsRecordType: servicediscovery.DnsRecordType.A, dnsTtl: Duration.seconds(10) },
    });
    this.url = `http://egress.${props.prefix}.internal:${EGRESS_PROXY_PORT}`;
  }

  /** The runner in on 3128; out to any TCP port (an allow-list entry may name one; the proxy refuses the rest). */
  private proxySecurityGroup(props: EgressProxyProps): ec2.SecurityGroup {
    const group = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'Stratus egress proxy: the runner in on 3128; out to the internet (the proxy enforces each session list).',
      allowAllOutbound: false,
    });
    group.addIngressRule(props.runnerSecurityGroup, ec2.Port.tcp(EGRESS_PROXY_PORT), 'The runner');
    group.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.allTcp(), 'Allow-listed destinations, ECR and Secrets Manager');
    props.runnerSecurityGroup.addEgressRule(group, ec2.Port.tcp(EGRESS_PROXY_PORT), 'The egress proxy');
    return group;
  }

  private proxyTask(props: EgressProxyProps): ecs.FargateTaskDefinition {
    const task = new ecs.FargateTaskDefinition(this, 'Task', {
      cpu: 256,
      memoryLimitMiB: 512,
      runtimePlatform: { cpuArchitecture: ecs.CpuArchitecture.ARM64, operatingSystemFamily: ecs.OperatingSystemFamily.LINUX },
    });
    task.addContainer('Proxy', {
      image: ecs.ContainerImage.fromAsset(REPO_ROOT, {
        file: props.dockerfile,
        platform: Platform.LINUX_ARM64,
        exclude: IMAGE_CONTEXT,
        ignoreMode: IgnoreMode.DOCKER,
      }),
      // Injected by ECS (the execution role reads it); the task role has no permissions at all.
      secrets: { STRATUS_EGRESS_TOKEN_KEY: ecs.Secret.fromSecretsManager(this.tokenKey) },
      portMappings: [{ containerPort: EGRESS_PROXY_PORT }],
      logging: ecs.LogDrivers.awsLogs({ streamPrefix: 'egress', logGroup: new logs.LogGroup(this, 'Logs', { retention: props.logRetentionDays }) }),
      readonlyRootFilesystem: true,
    });
    return task;
  }
}
