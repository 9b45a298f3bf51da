/**
 * The tags of the document: every operation names its own (`tags: [TAG.orders]`), so they live at the edge
 * that every route shares; the document (openapi/document.ts) lists them, grouped. Navigation: groups that
 * hold no operations themselves. Operations carry only the child tags. The groups appear both as
 * `x-tagGroups` and as parent tags named by `x-parent`.
 */
export const TAG = {
  catalogue: 'Catalogue',
  orders: 'Orders',
  events: 'Events',
  webhooks: 'Webhooks',
  usage: 'Usage',
  tokens: 'Tokens',
  versions: 'Versions',
  testing: 'Testing',
} as const;

export const TAG_GROUPS = [
  {
    name: 'Pets',
    description: 'The pets of the store.',
    tags: [{ name: TAG.catalogue, description: 'Read the catalogue of pets.' }],
  },
  {
    name: 'Store',
    description: 'Orders placed with the store.',
    tags: [
      {
        name: TAG.orders,
        description: 'Place, read and cancel your orders, and watch them move: placed, approved, delivered.',
      },
    ],
  },
  {
    name: 'Notifications',
    description: 'What happened to your orders.',
    tags: [
      { name: TAG.events, description: 'Every move of every order of yours, newest first: poll them here.' },
      {
        name: TAG.webhooks,
        description: 'Have your events sent to you as they happen, signed (Standard Webhooks), retried, logged.',
      },
    ],
  },
  {
    name: 'Account',
    description: 'Your key and its plan.',
    tags: [
      { name: TAG.usage, description: 'What your plan allows, and what is left of it: counts nothing.' },
      {
        name: TAG.tokens,
        description:
          'OAuth 2.0 client credentials: your key as a client gets access tokens that expire, for Authorization: Bearer.',
      },
      {
        name: TAG.versions,
        description: 'The versions of the API and what each changed: needs no key, counts nothing.',
      },
      {
        name: TAG.testing,
        description:
          "Test keys only: move your key's own clock (windows, bans, orders, sunsets follow it) and start its data " +
          'over. Counts nothing.',
      },
    ],
  },
] as const;

export function openapiTags() {
  return TAG_GROUPS.flatMap((group) => [
    { name: group.name, description: group.description },
    ...group.tags.map((tag) => ({ ...tag, 'x-parent': group.name })),
  ]);
}

export function tagGroups() {
  return TAG_GROUPS.map((group) => ({ name: group.name, tags: group.tags.map((t) => t.name) }));
}
