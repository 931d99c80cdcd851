/**
 * Polls `what` every 100 ms until `ok` holds for its value (for state that settles in the
 * background, such as a purge); throws after `tries` polls (30 s by default).
 */
export async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, tries = 300): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await what();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('condition never held');
}
