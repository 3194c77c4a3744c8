/**
 * The model catalogue: models (a team's or the system's) and which a team uses (owner: modules/models).
 */
import { bigint, boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { created, ts } from './columns.js';
import { teams } from './teams.js';

export const models = pgTable(
  'models',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** null for system models */
    teamId: uuid('team_id').references(() => teams.id, { onDelete: 'cascade' }),
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
  (t) => [index('models_team_idx').on(t.teamId)],
);

/** Which models a team uses: its own models and the system models it has added. */
export const teamModels = pgTable(
  'team_models',
  {
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
    added: ts('added').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.modelId] })],
);
