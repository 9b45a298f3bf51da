import Type from 'typebox';
import { StringEnum } from '../http/schemas.js';
import { PLAN_NAMES } from '../ratelimit/plans.js';
import { FAULTS } from '../faults/profile.js';
import { VERSIONS } from '../versions/versions.js';
import type { KeyRecord } from './repository.js';

/** A test key's standing fault profile, as shown (faults/profile.ts). */
const FaultProfileView = Type.Object({
  rate: Type.Number(),
  faults: Type.Array(StringEnum(FAULTS)),
  latencyMs: Type.Union([Type.Object({ min: Type.Integer(), max: Type.Integer() }), Type.Null()]),
  seed: Type.Integer(),
  setAt: Type.String({ format: 'date-time' }),
});

/** How the admin API and the CLI show a key: never the key itself, only its display prefix. */
export const KeyView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  plan: StringEnum(PLAN_NAMES),
  perMinute: Type.Union([Type.Integer(), Type.Null()]),
  perDay: Type.Union([Type.Integer(), Type.Null()]),
  prefix: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  test: Type.Boolean(),
  apiVersion: StringEnum(VERSIONS, { description: 'The version its requests get when they name none.' }),
  faults: Type.Union([FaultProfileView, Type.Null()]),
  ban: Type.Union([Type.Object({ until: Type.String({ format: 'date-time' }), level: Type.Integer() }), Type.Null()]),
});

export type Ban = { until: number; level: number } | null;

export function keyView(record: KeyRecord, ban: Ban) {
  const { unbanSeq: _internal, ...shown } = record;
  return { ...shown, ban: ban && { until: new Date(ban.until).toISOString(), level: ban.level } };
}
