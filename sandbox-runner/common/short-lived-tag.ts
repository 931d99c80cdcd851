/**
 * The object tag of workspace objects that are only needed briefly: staged archive uploads and
 * running commands' stop markers. They live under each workspace's own prefix (the per-workspace
 * credentials reach nothing else), where a lifecycle rule cannot match them by key prefix; the
 * bucket's lifecycle rule matches this tag instead and expires them after a day
 * (infra/constructs/data-stores.ts).
 */
export const SHORT_LIVED_TAG = { key: 'stratus-expiry', value: '1d' } as const;

/** The tag as PutObject's `Tagging` parameter (URL query form). */
export const SHORT_LIVED_TAGGING = `${SHORT_LIVED_TAG.key}=${SHORT_LIVED_TAG.value}`;

/** The tag as a browser-style POST upload's `tagging` form field (XML). */
export const SHORT_LIVED_TAGGING_XML = `<Tagging><TagSet><Tag><Key>${SHORT_LIVED_TAG.key}</Key><Value>${SHORT_LIVED_TAG.value}</Value></Tag></TagSet></Tagging>`;
