/** A counting gate: at most `max` holders at once, the rest wait in arrival order. */
export interface StartGate {
  /** Waits for a place; the returned function gives it back (calling it again does nothing). */
  acquire(): Promise<() => void>;
  /** Lets every waiter (and every later caller) through at once: the owner is shutting down. */
  open(): void;
}

export function createStartGate(max: number): StartGate {
  const waiters: (() => void)[] = [];
  let held = 0;
  let opened = false;
  return {
    async acquire() {
      while (held >= max && !opened) await new Promise<void>((resolve) => waiters.push(resolve));
      held += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        held -= 1;
        waiters.shift()?.();
      };
    },
    open() {
      opened = true;
      for (const wake of waiters.splice(0)) wake();
    },
  };
}
