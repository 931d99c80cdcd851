/** Agent-made schedules a session may hold at once (the reference's limit on its scheduled jobs). */
export const MAX_AGENT_SCHEDULES = 50;
/** An agent's recurring schedule fires for this long, then once more, and is deleted (the reference's age-out). */
export const AGENT_SCHEDULE_MAX_AGE_DAYS = 7;
