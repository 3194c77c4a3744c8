import { Type, type Static } from 'typebox';
import { DateTime, Uuid } from '../../http/schemas.js';

/** An HTTP header name (RFC 9110 token). */
const HeaderName = "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$";
/**
 * Custom headers sent to the server with every request (an API key, a bearer token): secrets,
 * stored sealed and never answered; the API shows their names only (`headerNames`).
 */
const Headers = Type.Record(Type.String({ pattern: HeaderName }), Type.String({ maxLength: 8192, pattern: '^[^\\r\\n\\u0000]*$' }), {
  maxProperties: 20,
  description: 'custom headers sent with every request to the server (secrets: stored encrypted, never returned; `headerNames` shows their names)',
});
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'the server\u2019s MCP streamable HTTP endpoint (http or https), under the same guard as model URLs',
});

export const McpServer = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    url: Type.String(),
    enabled: Type.Boolean({ description: 'false: its tools are offered in no workspace' }),
    headerNames: Type.Array(Type.String(), { description: 'the names of its custom headers (their values are never returned)' }),
    created: DateTime,
    updated: DateTime,
  },
  { $id: 'McpServer' },
);
export type McpServerT = Static<typeof McpServer>;

export const CreateMcpServerBody = Type.Object(
  {
    name: Name,
    url: Url,
    headers: Type.Optional(Headers),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type CreateMcpServerBodyT = Static<typeof CreateMcpServerBody>;

export const PatchMcpServerBody = Type.Object(
  {
    name: Type.Optional(Name),
    url: Type.Optional(Url),
    headers: Type.Optional(Type.Union([Headers, Type.Null()], { description: 'replaces every custom header; null removes them all' })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchMcpServerBodyT = Static<typeof PatchMcpServerBody>;

export const McpToolInfo = Type.Object({ name: Type.String(), description: Type.String() });

export const McpServerTest = Type.Object(
  {
    ok: Type.Boolean(),
    tools: Type.Array(McpToolInfo),
    error: Type.Optional(Type.String({ description: 'why the server could not be reached or listed (absent when ok)' })),
  },
  { $id: 'McpServerTest' },
);
export type McpServerTestT = Static<typeof McpServerTest>;
