/**
 * A broadcast of one producer's events to any number of readers. Readers that join late see
 * every event from the start; a reader that stops reading never blocks the producer (a turn
 * keeps running when its client goes away).
 */
export class EventFeed<T> {
  private readonly events: T[] = [];
  private closed = false;
  private waiters: (() => void)[] = [];

  push(event: T): void {
    if (this.closed) return;
    this.events.push(event);
    this.wake();
  }

  close(): void {
    this.closed = true;
    this.wake();
  }

  async *read(): AsyncGenerator<T> {
    let i = 0;
    for (;;) {
      while (i < this.events.length) yield this.events[i++]!;
      if (this.closed) return;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
