import Type, { type Static } from 'typebox';
import { StringEnum } from '../http/schemas.js';
import { MAX_LIMIT, PLAN_NAMES } from '../ratelimit/plans.js';

const Instant = (description: string) => Type.String({ format: 'date-time', maxLength: 30, description });
const Count = (description: string) => Type.Integer({ format: 'int32', minimum: 0, maximum: MAX_LIMIT, description });

const UsageWindow = (name: string) =>
  Type.Object(
    {
      limit: Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: MAX_LIMIT,
        description: `Requests the ${name} allows.`,
      }),
      used: Count(
        `Requests counted in the ${name} (at most its limit: after a downgrade, counts above the new limit show as ` +
          `the limit).`,
      ),
      remaining: Count(
        `Requests left in the ${name} by your own counts (during a ban none is admitted, whatever this says: see ` +
          `\`ban\`).`,
      ),
      nextSlotAt: Instant(`When one more request fits in the ${name}: now, while requests remain.`),
      resetsAt: Instant(`When the ${name} is empty again.`),
    },
    { additionalProperties: false, description: `The ${name} window.` },
  );

export const Usage = Type.Object(
  {
    plan: StringEnum(PLAN_NAMES, { description: "Your key's plan." }),
    windows: Type.Object(
      { minute: UsageWindow('sliding minute'), day: UsageWindow('UTC day') },
      { additionalProperties: false, description: 'Both windows of the plan, as your requests leave them.' },
    ),
    ban: Type.Union(
      [
        Type.Null(),
        Type.Object(
          {
            until: Instant('When the ban ends.'),
            level: Type.Integer({
              format: 'int32',
              minimum: 1,
              maximum: 64,
              description: '1 for a first ban; each further ban soon after one ends doubles its length.',
            }),
          },
          { additionalProperties: false },
        ),
      ],
      { description: 'The ban in force, if any: every request is refused until it ends.' },
    ),
    today: Count('Requests counted today (UTC): the day window’s `used`.'),
  },
  { $id: 'Usage', additionalProperties: false, description: 'Your usage of your plan, now.' },
);
export type Usage = Static<typeof Usage>;
