/** The turn's client-visible events are stored records: they are defined with the stores. */
export type { TurnEvent, UsageTotals } from '../stores/turn-event.ts';
