/**
 * The key the local stack's clients sign with and its stand-ins check (S3, DynamoDB). The access
 * key id is the one s3rver knows. It is a published constant: the checks refuse unsigned and
 * mis-signed requests, and the sandbox never reaches the stand-ins at all (docs/security.md).
 */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;
