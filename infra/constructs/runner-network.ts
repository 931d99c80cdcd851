import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { EGRESS_REQUEST_SUFFIX } from '../../sandbox-runner/common/egress-mailbox.ts';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { BUCKET_LAYOUT } from '../../functions/stores/bucket-layout.ts';

export interface RunnerNetworkProps {
  /** The workspace bucket: the one thing the runner reaches by default. */
  readonly bucket: s3.IBucket;
  /** Add public subnets (and so an internet gateway) for the egress proxy. The runner's subnets never route to them. */
  readonly publicSubnets: boolean;
  readonly maxAzs: number;
  readonly logRetentionDays: logs.RetentionDays;
}

/**
 * Where the runner function lives: a VPC whose runner subnets are isolated (no NAT gateway, no
 * route to an internet gateway), so a command has no internet, whatever it does. S3 is reached
 * through a gateway endpoint (free) whose policy admits only the workspace prefix of this
 * stack's bucket, so the endpoint cannot carry data to any other bucket either. Costs nothing
 * at idle: VPCs, subnets, route tables, security groups and gateway endpoints are free, and flow
 * logs bill only for what they write.
 */
export class RunnerNetwork extends Construct {
  readonly vpc: ec2.Vpc;
  readonly runnerSubnets: ec2.SubnetSelection = { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
  /** The runner's security group: HTTPS out (only S3's routes exist), and the egress proxy's port when there is one. */
  readonly runnerSecurityGroup: ec2.SecurityGroup;
  readonly s3Endpoint: ec2.GatewayVpcEndpoint;
  readonly flowLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: RunnerNetworkProps) {
    super(scope, id);
    const subnetConfiguration: ec2.SubnetConfiguration[] = [{ name: 'runner', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 20 }];
    if (props.publicSubnets) subnetConfiguration.push({ name: 'egress', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24, mapPublicIpOnLaunch: false });
    this.flowLogs = new logs.LogGroup(this, 'FlowLogs', { retention: props.logRetentionDays });
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr('10.42.0.0/16'),
      maxAzs: props.maxAzs,
      natGateways: 0,
      subnetConfiguration,
      restrictDefaultSecurityGroup: false,
      flowLogs: { All: { destination: ec2.FlowLogDestination.toCloudWatchLogs(this.flowLogs), trafficType: ec2.FlowLogTrafficType.ALL } },
    });
    this.s3Endpoint = this.vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3, subnets: [this.runnerSubnets] });
    // What the runner does with its per-workspace credentials, and nothing else, through this endpoint.
    this.s3Endpoint.addToPolicy(
      new iam.PolicyStatement({
        principals: [new iam.AnyPrincipal()],
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: [props.bucket.arnForObjects(`${BUCKET_LAYOUT.workspaces}*`), props.bucket.arnForObjects(`${BUCKET_LAYOUT.environments}*`)],
      }),
    );
    this.s3Endpoint.addToPolicy(
      new iam.PolicyStatement({ principals: [new iam.AnyPrincipal()], actions: ['s3:ListBucket'], resources: [props.bucket.bucketArn] }),
    );
    // Egress mailbox requests carry the short-lived tag (a PutObject with a Tagging header needs this too).
    this.s3Endpoint.addToPolicy(
      new iam.PolicyStatement({
        principals: [new iam.AnyPrincipal()],
        actions: ['s3:PutObjectTagging'],
        resources: [props.bucket.arnForObjects(`${BUCKET_LAYOUT.workspaces}*/egress/*${EGRESS_REQUEST_SUFFIX}`)],
      }),
    );
    this.runnerSecurityGroup = new ec2.SecurityGroup(this, 'RunnerSecurityGroup', {
      vpc: this.vpc,
      description: 'Stratus runner: HTTPS out, where only the S3 gateway endpoint is routed; nothing in.',
      allowAllOutbound: false,
    });
    // The S3 prefix list has no CloudFormation attribute to name here; the route tables are what
    // confine port 443 to S3 (isolated subnets have no other route out).
    this.runnerSecurityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'S3 through the gateway endpoint (the only route)');
  }
}
