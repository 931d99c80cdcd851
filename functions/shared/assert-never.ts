/**
 * The default branch of a switch over a union: the compiler refuses the call while any member
 * is unhandled, so adding a member means handling it everywhere. Reaching it at run time means
 * a value from outside the types (a stored record from a newer version), which is a bug to see.
 */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unexpected ${what}: ${JSON.stringify(value)}`);
}
