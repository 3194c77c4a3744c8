import { Type, type Static } from 'typebox';
import { DateTime, GenerationParamFields, Nullable, Uuid } from '../../http/schemas.js';

const ChatHistoryType = Type.Union([Type.Literal('TEAM'), Type.Literal('USER')]);
const ContextType = Type.Union([Type.Literal('SHARED'), Type.Literal('PRIVATE')]);
const SharingType = Type.Union([Type.Literal('TEAM'), Type.Literal('PRIVATE')]);
const SamplePrompts = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 50 });
/** How a follow-up question is searched (docs/API.md, Follow-ups). */
const FollowUpSearch = Type.Union([Type.Literal('carry'), Type.Literal('rewrite')], {
  description:
    "how a follow-up question is searched in the Plus entries and thread files: 'carry' (default) adds the previous question's rarest words at half weight; 'rewrite' asks the turn's model to rewrite it as a standalone question first (its tokens count in the turn's usage and budget, and the prompt log's `rewrite` shows the query)",
});
/** The Plus entries every chat turn in the workspace draws on (docs/API.md, "Workspace Plus entries"). */
const PlusIds = Type.Array(Uuid, { maxItems: 50, description: 'Plus entries every chat turn in this workspace draws context from (those the caller may see)' });

/** The team's MCP servers whose tools every chat turn in the workspace is offered (docs/API.md, "MCP servers"). */
const McpServerIds = Type.Array(Uuid, { maxItems: 20, description: 'MCP servers of the team whose tools chat turns in this workspace are offered' });
const AllowedTools = Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 }), Type.Null()], {
  description: 'the tool names (of mcpServerIds) a turn may call; null: every tool of those servers',
});

export const WorkspaceModelSettings = Type.Object(
  {
    addedContext: Type.Optional(Nullable(Type.String({ maxLength: 200_000 }))),
    systemInstructions: Type.Optional(Nullable(Type.String({ maxLength: 200_000 }))),
    ...GenerationParamFields,
  },
  { additionalProperties: false },
);
export type WorkspaceModelSettingsT = Static<typeof WorkspaceModelSettings>;

export const WorkspaceModel = Type.Object(
  {
    workspaceId: Uuid,
    modelId: Uuid,
    modelName: Type.String(),
    addedContext: Nullable(Type.String()),
    systemInstructions: Nullable(Type.String()),
    temperature: Nullable(Type.Number()),
    maxTokens: Nullable(Type.Integer()),
    topP: Nullable(Type.Number()),
    n: Nullable(Type.Integer()),
    frequencyPenalty: Nullable(Type.Number()),
    presencePenalty: Nullable(Type.Number()),
    logitBias: Nullable(Type.Record(Type.String(), Type.Number())),
  },
  { $id: 'WorkspaceModel' },
);
export type WorkspaceModelT = Static<typeof WorkspaceModel>;

export const Workspace = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    chatHistoryType: ChatHistoryType,
    contextType: ContextType,
    sharingType: SharingType,
    greeting: Nullable(Type.String()),
    samplePrompts: Type.Array(Type.String()),
    models: Type.Array(Type.Ref('WorkspaceModel')),
    plusIds: PlusIds,
    mcpServerIds: McpServerIds,
    allowedTools: AllowedTools,
    followUpSearch: FollowUpSearch,
    userId: Type.Integer(),
    created: DateTime,
    updated: DateTime,
  },
  { $id: 'Workspace' },
);
export type WorkspaceT = Static<typeof Workspace>;

export const AddWorkspaceBody = Type.Object(
  {
    modelIds: Type.Optional(Type.Array(Uuid, { maxItems: 100 })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    chatHistoryType: Type.Optional(ChatHistoryType),
    contextType: Type.Optional(ContextType),
    sharingType: Type.Optional(SharingType),
    greeting: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
    samplePrompts: Type.Optional(SamplePrompts),
    plusIds: Type.Optional(PlusIds),
    mcpServerIds: Type.Optional(McpServerIds),
    allowedTools: Type.Optional(AllowedTools),
    followUpSearch: Type.Optional(FollowUpSearch),
  },
  { additionalProperties: false },
);
export type AddWorkspaceBodyT = Static<typeof AddWorkspaceBody>;

export const PatchWorkspaceBody = Type.Object(
  {
    modelIds: Type.Optional(Type.Array(Uuid, { maxItems: 100 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    chatHistoryType: Type.Optional(ChatHistoryType),
    contextType: Type.Optional(ContextType),
    sharingType: Type.Optional(SharingType),
    greeting: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
    samplePrompts: Type.Optional(SamplePrompts),
    plusIds: Type.Optional(PlusIds),
    mcpServerIds: Type.Optional(McpServerIds),
    allowedTools: Type.Optional(AllowedTools),
    followUpSearch: Type.Optional(FollowUpSearch),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchWorkspaceBodyT = Static<typeof PatchWorkspaceBody>;
