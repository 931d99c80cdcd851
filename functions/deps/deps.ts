import type Anthropic from '@anthropic-ai/sdk';
import type { S3Client } from '@aws-sdk/client-s3';
import type { RunnerClient, WorkspaceCredentialSource } from '../runner-client/runner-client.ts';
import type { IdSource } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import type { MessageStore } from '../stores/message-store.ts';
import type { SessionStore } from '../stores/session-store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { StratusConfig } from './config.ts';

/** Everything the app needs, built once per home (Lambda container, local process). */
export interface Deps {
  config: StratusConfig;
  sessions: SessionStore;
  messages: MessageStore;
  runner: RunnerClient;
  /** The API's own S3 access: staging workspace uploads, streaming exports back. */
  s3: S3Client;
  workspaceCredentials: WorkspaceCredentialSource;
  model: Anthropic;
  tools: ToolRegistry;
  clock: () => number;
  newId: IdSource;
  log: Logger;
  /** Identifies this process in leases. */
  instanceId: string;
}
