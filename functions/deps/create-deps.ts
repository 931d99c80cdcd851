import Anthropic from '@anthropic-ai/sdk';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createLambdaRunnerClient, type WorkspaceCredentialSource } from '../runner-client/runner-client.ts';
import { createTimeOrderedId } from '../shared/ids.ts';
import { createLogger } from '../shared/logger.ts';
import { MessageStore } from '../stores/message-store.ts';
import { SessionStore } from '../stores/session-store.ts';
import { createToolRegistry } from '../tools/registry.ts';
import type { StratusConfig } from './config.ts';
import type { Deps } from './deps.ts';

/**
 * The composition root: the only place AWS and Anthropic clients are constructed. The same
 * function serves Lambda and the local stack; only endpoints and credentials in the config differ.
 */
export function createDeps(
  config: StratusConfig,
  overrides: { workspaceCredentials?: WorkspaceCredentialSource; instanceId?: string } = {},
): Deps {
  const aws = {
    region: config.region,
    ...(config.localCredentials ? { credentials: config.localCredentials } : {}),
  };
  const dynamo = new DynamoDBClient({ ...aws, endpoint: config.endpoints.dynamodb });
  const db = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const lambda = new LambdaClient({ ...aws, endpoint: config.endpoints.lambda });
  // Checksums only when required: safe for S3 and needed by the local S3 server (LOCAL-STACK.md).
  const s3 = new S3Client({
    ...aws,
    endpoint: config.endpoints.s3,
    forcePathStyle: config.endpoints.s3 !== undefined,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const instanceId = overrides.instanceId ?? createTimeOrderedId('inst');
  return {
    config,
    sessions: new SessionStore(db, config.tables.sessions),
    messages: new MessageStore(db, config.tables.messages),
    runner: createLambdaRunnerClient(lambda, config.runnerFunction),
    s3,
    workspaceCredentials: overrides.workspaceCredentials ?? staticCredentials(config),
    model: new Anthropic({ apiKey: config.model.apiKey, baseURL: config.model.baseURL }),
    tools: createToolRegistry(),
    clock: Date.now,
    newId: createTimeOrderedId,
    log: createLogger({ level: config.logLevel, context: { instance: instanceId } }),
    instanceId,
  };
}

/** The local stack hands the runner the local S3 server's static credentials. */
function staticCredentials(config: StratusConfig): WorkspaceCredentialSource {
  return {
    async forWorkspace() {
      if (!config.localCredentials) {
        throw new Error('No workspace credential source: in AWS, the scoped STS credential minter must be configured.');
      }
      return { ...config.localCredentials };
    },
  };
}
