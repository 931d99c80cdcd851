/**
 * What IAM authorizes for one AWS SDK call: the action(s), the resource ARN(s) and the condition
 * keys the stack's policies test (`s3:prefix`, `iam:PassedToService`). One SDK call can need
 * several: a DeleteObjects needs `s3:DeleteObject` on every key, a CopyObject reads its source,
 * a PutObject with tags needs `s3:PutObjectTagging` too (Service Authorization Reference).
 * A command this table does not know comes back `unmapped`, so the IAM coverage check fails
 * until someone says what it needs, rather than passing it unchecked.
 */
export interface IamRequest {
  action: string;
  resource: string;
  context: Record<string, string>;
}

export type IamRequests = { requests: IamRequest[] } | { unmapped: string };

/** The account the local stack's ARNs are written in (the stand-ins have none). */
export const LOCAL_ACCOUNT = '000000000000';

type Input = Record<string, unknown>;
type Arn = { region: string; account: string };

export function iamRequestsOf(clientName: string, commandName: string, input: Input, where: Arn): IamRequests {
  const command = commandName.replace(/Command$/, '');
  const requests = (MAPPERS[clientName.replace(/Client$/, '')] ?? none)(command, input, where);
  return requests ? { requests } : { unmapped: `${clientName}.${commandName}` };
}

type Mapper = (command: string, input: Input, where: Arn) => IamRequest[] | undefined;
const none: Mapper = () => undefined;
const req = (action: string, resource: string, context: Record<string, string> = {}): IamRequest => ({ action, resource, context });

/** The document client's commands are the table API's under shorter names. */
const DOCUMENT_COMMANDS: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  BatchWrite: 'BatchWriteItem',
  BatchGet: 'BatchGetItem',
  TransactWrite: 'TransactWriteItems',
  TransactGet: 'TransactGetItems',
};
const TABLE_ACTIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'DescribeTable',
  'CreateTable',
  'UpdateTable',
  'DeleteTable',
  'UpdateTimeToLive',
  'DescribeTimeToLive',
]);
const TRANSACT_ITEM_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

function dynamodb(commandName: string, input: Input, where: Arn): IamRequest[] | undefined {
  const command = DOCUMENT_COMMANDS[commandName] ?? commandName;
  const table = (name: unknown, index?: unknown) =>
    `arn:aws:dynamodb:${where.region}:${where.account}:table/${String(name)}${index ? `/index/${String(index)}` : ''}`;
  if (TABLE_ACTIONS.has(command)) return [req(`dynamodb:${command}`, table(input.TableName, input.IndexName))];
  if (command === 'BatchWriteItem' || command === 'BatchGetItem') {
    return Object.keys((input.RequestItems ?? {}) as Input).map((name) => req(`dynamodb:${command}`, table(name)));
  }
  if (command === 'TransactWriteItems' || command === 'TransactGetItems') {
    return ((input.TransactItems ?? []) as Input[]).flatMap((item) =>
      Object.entries(item).map(([kind, body]) => req(`dynamodb:${TRANSACT_ITEM_ACTIONS[kind] ?? kind}`, table((body as Input).TableName))),
    );
  }
  return undefined;
}

const S3_OBJECT_ACTIONS: Record<string, [string, string]> = {
  GetObject: ['s3:GetObject', 's3:GetObjectVersion'],
  HeadObject: ['s3:GetObject', 's3:GetObjectVersion'],
  DeleteObject: ['s3:DeleteObject', 's3:DeleteObjectVersion'],
  PutObjectTagging: ['s3:PutObjectTagging', 's3:PutObjectVersionTagging'],
  GetObjectTagging: ['s3:GetObjectTagging', 's3:GetObjectVersionTagging'],
  CreateMultipartUpload: ['s3:PutObject', 's3:PutObject'],
  UploadPart: ['s3:PutObject', 's3:PutObject'],
  CompleteMultipartUpload: ['s3:PutObject', 's3:PutObject'],
  AbortMultipartUpload: ['s3:AbortMultipartUpload', 's3:AbortMultipartUpload'],
};
const S3_LISTINGS: Record<string, string> = {
  ListObjectsV2: 's3:ListBucket',
  ListObjects: 's3:ListBucket',
  HeadBucket: 's3:ListBucket',
  ListObjectVersions: 's3:ListBucketVersions',
};

function s3(command: string, input: Input): IamRequest[] | undefined {
  const bucket = `arn:aws:s3:::${String(input.Bucket)}`;
  const object = (key: unknown) => `${bucket}/${String(key)}`;
  const objectAction = S3_OBJECT_ACTIONS[command];
  if (objectAction) return [req(objectAction[input.VersionId ? 1 : 0], object(input.Key))];
  const listing = S3_LISTINGS[command];
  if (listing) return [req(listing, bucket, typeof input.Prefix === 'string' ? { 's3:prefix': input.Prefix } : {})];
  if (command === 'PutObject') return [req('s3:PutObject', object(input.Key)), ...(input.Tagging ? [req('s3:PutObjectTagging', object(input.Key))] : [])];
  if (command === 'DeleteObjects') {
    const objects = ((input.Delete as Input | undefined)?.Objects ?? []) as { Key: string; VersionId?: string }[];
    return objects.map((o) => req(o.VersionId ? 's3:DeleteObjectVersion' : 's3:DeleteObject', object(o.Key)));
  }
  if (command === 'CopyObject') {
    const source = decodeURIComponent(String(input.CopySource).replace(/^\//, '').split('?')[0]!);
    return [req('s3:PutObject', object(input.Key)), req('s3:GetObject', `arn:aws:s3:::${source}`)];
  }
  return undefined;
}

function lambda(command: string, input: Input, where: Arn): IamRequest[] | undefined {
  if (command !== 'Invoke' && command !== 'InvokeWithResponseStream') return undefined;
  const name = String(input.FunctionName);
  const arn = name.startsWith('arn:') ? name : `arn:aws:lambda:${where.region}:${where.account}:function:${name}`;
  return [req('lambda:InvokeFunction', input.Qualifier ? `${arn}:${String(input.Qualifier)}` : arn)];
}

function scheduler(command: string, input: Input, where: Arn): IamRequest[] | undefined {
  if (!['CreateSchedule', 'UpdateSchedule', 'DeleteSchedule', 'GetSchedule'].includes(command)) return undefined;
  const schedule = `arn:aws:scheduler:${where.region}:${where.account}:schedule/${String(input.GroupName ?? 'default')}/${String(input.Name)}`;
  const role = (input.Target as Input | undefined)?.RoleArn;
  const passRole = role ? [req('iam:PassRole', String(role), { 'iam:PassedToService': 'scheduler.amazonaws.com' })] : [];
  return [req(`scheduler:${command}`, schedule), ...passRole];
}

const MAPPERS: Record<string, Mapper> = {
  DynamoDB: dynamodb,
  DynamoDBDocument: dynamodb,
  S3: s3,
  Lambda: lambda,
  Scheduler: scheduler,
  STS: (command, input) => (command === 'AssumeRole' ? [req('sts:AssumeRole', String(input.RoleArn))] : undefined),
  SecretsManager: (command, input) => (command === 'GetSecretValue' ? [req('secretsmanager:GetSecretValue', String(input.SecretId))] : undefined),
};
