/**
 * Where a request's bearer token is. Behind the optional CloudFront distribution
 * (infra/constructs/custom-domain.ts), origin access control replaces `Authorization` with its
 * own SigV4 signature, so the distribution's viewer-request function moves the client's header
 * here first; it wins when present. Elsewhere clients use `Authorization` as usual.
 */
export const FORWARDED_AUTHORIZATION_HEADER = 'x-stratus-authorization';

export function authorizationHeader(header: (name: string) => string | undefined): string {
  return header(FORWARDED_AUTHORIZATION_HEADER) ?? header('authorization') ?? '';
}
