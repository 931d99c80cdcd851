import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { errorMessage } from '../shared/errors.ts';
import { EventFeed } from '../shared/event-feed.ts';
import type { Logger } from '../shared/logger.ts';
import { MAX_EVENTS_PER_ITEM, type EventStore, type StoredTurnEvent } from '../stores/event-store.ts';
import type { TurnEvent } from '../stores/turn-event.ts';

/** Text deltas arriving within this window are sent and stored as one event. */
export const TEXT_COALESCE_MS = 50;
const TEXT_COALESCE_MAX_CHARS = 4_000;
/**
 * Events other than text wait this long to be stored (and sent), gathering what follows: a tool
 * round trip's events (the call, its result, the next response) are one write, not one each.
 * The turn's end and `close` store what waits at once.
 */
export const EVENT_BATCH_MS = 50;
/** Event JSON per stored item at most (DynamoDB's item limit is 400 KB); a larger event goes alone, as it always did. */
const ITEM_EVENT_BYTES = 256 * 1024;

/**
 * A turn's events, numbered, appended to the event log in order and only then broadcast live to
 * readers in this process: whatever a live client saw, a reconnect (Last-Event-ID) or a follower
 * in another invocation sees too. Consecutive text deltas are coalesced briefly so the log gets
 * a few writes per second, not one per token; other events wait EVENT_BATCH_MS, and longer
 * while a write runs, and what gathered meanwhile (an assistant message, its tool calls, their
 * results) goes out as one item.
 */
export class TurnFeed {
  readonly live = new EventFeed<StoredTurnEvent>();
  private seq: number;
  private text = '';
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();
  /** Numbered, waiting for the batch window or the write in progress. */
  private pending: StoredTurnEvent[] = [];
  private batchTimer: NodeJS.Timeout | undefined;
  /** Events numbered but not yet stored: while the store is behind, text keeps coalescing. */
  private unstored = 0;
  /** Someone else wrote this turn's log (it found this turn dead): nothing more goes out. */
  private takenOver = false;

  constructor(
    private readonly events: EventStore,
    private readonly sessionId: string,
    readonly turnId: string,
    private readonly log: Logger,
    /** A continued turn goes on numbering where the previous invocation stopped. */
    firstSeq = 0,
  ) {
    this.seq = firstSeq;
  }

  get nextSeq(): number {
    return this.seq;
  }

  push(event: TurnEvent): void {
    if (event.type === 'text_delta') {
      this.text += event.text;
      if (this.text.length >= TEXT_COALESCE_MAX_CHARS) this.flushText();
      else this.timer ??= setTimeout(() => this.textTimer(), TEXT_COALESCE_MS);
      return;
    }
    this.flushText();
    this.emit(event);
  }

  /** Flushes what is pending and waits until every event is stored (and sent). */
  async close(): Promise<void> {
    this.flushText();
    this.writePending();
    await this.writes;
    this.live.close();
  }

  /**
   * Ends the feed with `event` (the turn_end): stored first, then `beforeSend` runs (giving the
   * lease up: a reader that finds the lease gone must find this event in the log), then it is
   * sent, so a client that reacts to it finds the session free.
   */
  async end(event: TurnEvent, beforeSend: () => Promise<void>): Promise<void> {
    this.flushText();
    this.writePending();
    const stored = this.number(event);
    this.unstored += 1;
    this.writes = this.writes.then(async () => {
      const ok = !this.takenOver && (await this.store([stored]));
      this.unstored -= 1;
      await beforeSend();
      if (ok) this.live.push(stored);
    });
    await this.writes;
    this.live.close();
  }

  /** Sending waits for storing, so text that would only queue behind a write waits for the next window. */
  private textTimer(): void {
    this.timer = undefined;
    if (this.unstored > 0) this.timer = setTimeout(() => this.textTimer(), TEXT_COALESCE_MS);
    else {
      // The text waited its own window already.
      this.flushText();
      this.writePending();
    }
  }

  private flushText(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.text) return;
    const text = this.text;
    this.text = '';
    this.emit({ type: 'text_delta', text });
  }

  private number(event: TurnEvent): StoredTurnEvent {
    return { turnId: this.turnId, seq: this.seq++, event };
  }

  private emit(event: TurnEvent): void {
    this.pending.push(this.number(event));
    this.unstored += 1;
    this.batchTimer ??= setTimeout(() => this.writePending(), EVENT_BATCH_MS);
  }

  /** Queues the pending events' write behind the ones in flight; what piles up until it runs goes with it. */
  private writePending(): void {
    if (!this.batchTimer) return;
    clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    this.writes = this.writes.then(() => this.storePending());
  }

  private async storePending(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = takeBatch(this.pending);
      const ok = !this.takenOver && (await this.store(batch));
      this.unstored -= batch.length;
      if (ok) for (const stored of batch) this.live.push(stored);
    }
  }

  /** Whether the events are in the log now (only then may anyone see them). */
  private async store(batch: StoredTurnEvent[]): Promise<boolean> {
    try {
      await this.events.append(this.sessionId, batch);
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return this.numberTaken(batch);
      // Not sent either: the message log stays authoritative, and a live client sees nothing a follower won't.
      this.log.error('could not store turn events; not sending them', { seq: batch[0]!.seq, types: batch.map((e) => e.event.type), error: errorMessage(err) });
      return false;
    }
  }

  /**
   * The number is taken: by this very write (a retried request whose first try landed), or by a
   * reader that found this turn dead and ended its log. Then this feed stops, and its live
   * readers get the log's ending instead.
   */
  private async numberTaken(batch: StoredTurnEvent[]): Promise<boolean> {
    const first = batch[0]!;
    let there: StoredTurnEvent[];
    try {
      there = await this.events.listAfter(this.sessionId, this.turnId, first.seq - 1, batch.length);
    } catch (err) {
      this.log.error('could not read back turn events; not sending them', { seq: first.seq, error: errorMessage(err) });
      return false;
    }
    if (there.length === batch.length && there.every((e, i) => JSON.stringify(e.event) === JSON.stringify(batch[i]!.event))) return true;
    this.takenOver = true;
    this.log.error('this turn was ended by another process (it missed its heartbeats); stopping its events', { seq: first.seq });
    if (there[0]?.event.type === 'turn_end') this.live.push(there[0]);
    this.live.close();
    return false;
  }
}

/** Takes the events that go out as the next item: at least one, then while they fit. */
function takeBatch(pending: StoredTurnEvent[]): StoredTurnEvent[] {
  let bytes = 0;
  let n = 0;
  while (n < pending.length && n < MAX_EVENTS_PER_ITEM) {
    bytes += Buffer.byteLength(JSON.stringify(pending[n]!.event));
    if (n > 0 && bytes > ITEM_EVENT_BYTES) break;
    n += 1;
  }
  return pending.splice(0, n);
}
