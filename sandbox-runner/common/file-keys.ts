/**
 * What a workspace file path ("file key": relative, `/`-separated, e.g. `src/main.ts`) may look
 * like. The API checks caller input with these rules before storing or forwarding anything, and
 * the runner applies the same ones when it writes seed files, exports a file or loads a version
 * from S3, so the two cannot disagree about what is a valid path.
 */

/** Longest name of one path component: NAME_MAX of Linux file systems (ext4, tmpfs, overlayfs). */
export const MAX_KEY_COMPONENT_BYTES = 255;

/**
 * Longest key the API and the runner accept from a caller. Linux refuses paths past PATH_MAX
 * (4,096 bytes with the terminating NUL) and the runner prefixes every key with the directory it
 * keeps the workspace in, so a key may use 3 KB and the runner's directory the rest.
 */
export const MAX_KEY_BYTES = 3_072;

/** Most seed files one request may carry. */
export const MAX_SEED_FILES = 10_000;

/**
 * Most bytes the seed files may take as JSON. Seeds travel inline in one runner invocation,
 * and Lambda caps a synchronous invocation's payload at 6 MB (6,291,456 bytes); the margin is
 * for the rest of the request (workspace reference, credentials).
 */
export const MAX_SEED_JSON_BYTES = 6_000_000;

export type SeedContent = string | { base64: string };

/** A path for messages: JSON-quoted (so NUL and control characters show) and cut when long. */
export function showKey(key: string): string {
  return JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
}

/** An unpaired UTF-16 surrogate: JSON can carry one (`"\ud800"`), a file name cannot. */
const LONE_SURROGATE = /\p{Cs}/u;

export function hasLoneSurrogate(value: string): boolean {
  return LONE_SURROGATE.test(value);
}

/**
 * Why `key` is not a plain relative path, or undefined when it is: no NUL, no empty, `.` or
 * `..` component (so no leading, trailing or doubled `/`), well-formed Unicode. Lengths are not
 * checked: a workspace may hold deeper paths a command created.
 */
export function keySyntaxProblem(key: string): string | undefined {
  if (key === '') return 'the path is empty';
  if (key.includes('\0')) return 'it contains a NUL character';
  if (hasLoneSurrogate(key)) return 'it is not well-formed Unicode (an unpaired surrogate)';
  if (key.startsWith('/')) return 'it is absolute; use a path relative to the workspace';
  const parts = key.split('/');
  if (parts.includes('..')) return 'it contains a ".." component; use a path inside the workspace';
  if (parts.includes('.')) return 'it contains a "." component';
  if (parts.includes('')) return 'it has an empty component (a doubled or trailing "/")';
  return undefined;
}

/** keySyntaxProblem, plus the file system's limits on component and path length. */
export function keyProblem(key: string): string | undefined {
  const syntax = keySyntaxProblem(key);
  if (syntax) return syntax;
  const bytes = Buffer.byteLength(key);
  if (bytes > MAX_KEY_BYTES) return `it is ${bytes} bytes long; at most ${MAX_KEY_BYTES} are allowed`;
  const long = key.split('/').find((part) => Buffer.byteLength(part) > MAX_KEY_COMPONENT_BYTES);
  if (long !== undefined) {
    return `its component ${showKey(long)} is ${Buffer.byteLength(long)} bytes long; at most ${MAX_KEY_COMPONENT_BYTES} are allowed per component`;
  }
  return undefined;
}

/** "Invalid file path "a//b": it has an empty component …" — the whole message for one bad key. */
export function keyMessage(key: string, problem: string): string {
  return `Invalid file path ${showKey(key)}: ${problem}.`;
}

/** Base64 (standard or URL-safe alphabet), padding optional; no whitespace. */
const BASE64 = /^(?:[\w+/-]{4})*(?:[\w+/-]{2}==|[\w+/-]{3}=|[\w+/-]{2,3})?$/;

export interface SeedProblem {
  /** `too_large`: the seeds pass a size limit (HTTP 413); `invalid`: they are malformed (400). */
  kind: 'invalid' | 'too_large';
  message: string;
}

/**
 * Why a set of seed files cannot become a workspace, or undefined when it can: too many, too
 * big, a bad key, content that is not base64, or one key that is a file and also the directory
 * of another (`{"d": …, "d/y": …}`).
 */
export function seedFilesProblem(files: Record<string, SeedContent>): SeedProblem | undefined {
  const keys = Object.keys(files);
  if (keys.length > MAX_SEED_FILES) return { kind: 'too_large', message: `${keys.length} seed files; at most ${MAX_SEED_FILES} are accepted in one request.` };
  for (const key of keys) {
    const problem = keyProblem(key);
    if (problem) return { kind: 'invalid', message: keyMessage(key, problem) };
    const content = files[key]!;
    if (typeof content !== 'string' && !BASE64.test(content.base64)) {
      return { kind: 'invalid', message: `The content of ${showKey(key)} is not valid base64.` };
    }
  }
  const set = new Set(keys);
  for (const key of keys) {
    for (let slash = key.indexOf('/'); slash !== -1; slash = key.indexOf('/', slash + 1)) {
      const dir = key.slice(0, slash);
      if (set.has(dir)) return { kind: 'invalid', message: `${showKey(dir)} cannot be a file and also the directory of ${showKey(key)}.` };
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(files));
  if (bytes > MAX_SEED_JSON_BYTES) {
    return {
      kind: 'too_large',
      message: `The seed files take ${bytes} bytes as JSON; at most ${MAX_SEED_JSON_BYTES} are accepted in one request. Create the session without them and upload a tar.gz with PUT /v1/sessions/:id/workspace/archive.`,
    };
  }
  return undefined;
}
