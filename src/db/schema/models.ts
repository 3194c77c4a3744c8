/**
 * The model catalogue: models (a team's or the system's) and which a team uses (owner: modules/models).
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, check, doublePrecision, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { created, ts } from './columns.js';
import { teams } from './teams.js';

/** The scope of a system model (models.scope): the nil uuid, no team's id. */
export const SYSTEM_SCOPE = '00000000-0000-0000-0000-000000000000';

/**
 * Keyed by (scope, id): a team model's id is unique in its team (the client may choose it), a
 * system model's among system models; a team's model never takes a system model's id (the
 * models service refuses it), so the ids a team sees name one model each.
 */
export const models = pgTable(
  'models',
  {
    id: uuid('id').notNull().defaultRandom(),
    /** null for system models */
    teamId: uuid('team_id').references(() => teams.id, { onDelete: 'cascade' }),
    /** what the key and every reference to the model carry: the team's id, or SYSTEM_SCOPE */
    scope: uuid('scope')
      .notNull()
      .generatedAlwaysAs(sql.raw(`coalesce(team_id, '${SYSTEM_SCOPE}'::uuid)`)),
    isSystem: boolean('is_system').notNull().default(false),
    name: text('name').notNull(),
    apiKeyEnc: text('api_key_enc'),
    apiKeyLast4: text('api_key_last4'),
    url: text('url'),
    connectionType: text('connection_type', { enum: ['URL', 'AZURE'] })
      .notNull()
      .default('URL'),
    apiBase: text('api_base', { enum: ['OPENAI', 'ANTHROPIC', 'GOOGLE'] })
      .notNull()
      .default('OPENAI'),
    icon: text('icon'),
    baseModel: text('base_model'),
    paramCount: bigint('param_count', { mode: 'number' }),
    computeType: text('compute_type'),
    architecture: text('architecture'),
    format: text('format'),
    engine: text('engine'),
    bitCount: integer('bit_count'),
    groupSize: integer('group_size'),
    contextWindow: integer('context_window'),
    /** what the provider reported when no contextWindow was declared (providers/window-probe.ts), and where it came from */
    probedContextWindow: integer('probed_context_window'),
    probedContextWindowSource: text('probed_context_window_source'),
    promptMode: text('prompt_mode'),
    accuracy: doublePrecision('accuracy'),
    speed: doublePrecision('speed'),
    weight: doublePrecision('weight'),
    specialized: boolean('specialized').notNull().default(false),
    active: boolean('active').notNull().default(true),
    chatCredits: integer('chat_credits').notNull().default(1),
    internalUseOnly: boolean('internal_use_only').notNull().default(false),
    usesSystemPrompts: boolean('uses_system_prompts').notNull().default(true),
    imageGen: boolean('image_gen').notNull().default(false),
    hasVision: boolean('has_vision').notNull().default(false),
    instructionFollowing: boolean('instruction_following').notNull().default(true),
    settingsAvailable: jsonb('settings_available').$type<Array<{ fieldName: string; name: string; description: string }>>(),
    promptWrapper: jsonb('prompt_wrapper').$type<{ wrapperName: string; value: string } | null>(),
    modelRating: integer('model_rating'),
    // what the model is for (chat, embedding, rerank), and an embedding model's vector size (configured, or found on first use)
    kind: text('kind', { enum: ['chat', 'embedding', 'rerank'] })
      .notNull()
      .default('chat'),
    embeddingDimensions: integer('embedding_dimensions'),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.id] }), index('models_team_idx').on(t.teamId)],
);

/** A team-scoped row's check that the model it names is the team's own or a system model. */
export const modelScopeCheck = (name: string, scope: unknown, teamId: unknown) =>
  check(name, sql`${scope} = ${teamId} or ${scope} = ${sql.raw(`'${SYSTEM_SCOPE}'::uuid`)}`);

/** Which models a team uses: its own models and the system models it has added. */
export const teamModels = pgTable(
  'team_models',
  {
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    /** the model's scope (models.scope) */
    modelScope: uuid('model_scope').notNull(),
    modelId: uuid('model_id').notNull(),
    added: ts('added').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.teamId, t.modelId] }),
    foreignKey({ columns: [t.modelScope, t.modelId], foreignColumns: [models.scope, models.id] }).onDelete('cascade'),
    modelScopeCheck('team_models_scope_ck', t.modelScope, t.teamId),
  ],
);
