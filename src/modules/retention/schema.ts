import { Type, type Static } from 'typebox';
import { Nullable, Uuid } from '../../http/schemas.js';

/** Days, 1 to 100 years; null: kept for ever. */
const Days = Nullable(Type.Integer({ minimum: 1, maximum: 36_500 }));

export const Retention = Type.Object({
  threadsDays: Days,
  promptLogsDays: Days,
});

export const TeamSettings = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    retention: Type.Object(
      { threadsDays: Days, promptLogsDays: Days },
      { description: 'threads (not pinned) idle longer, and prompt logs older, than this many days are deleted; null: kept' },
    ),
  },
  { $id: 'TeamSettings' },
);
export type TeamSettingsT = Static<typeof TeamSettings>;

export const PatchTeamBody = Type.Object({
  retention: Type.Object(
    { threadsDays: Type.Optional(Days), promptLogsDays: Type.Optional(Days) },
    { description: 'a field left out stays as it is; null turns that retention off' },
  ),
});
export type PatchTeamBodyT = Static<typeof PatchTeamBody>;
