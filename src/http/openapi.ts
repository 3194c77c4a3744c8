import type { SwaggerTransformObject } from '@fastify/swagger';

/** The operation groups of the OpenAPI document; every route's `tags` names one of these. */
export const OPENAPI_TAGS = [
  {
    name: 'auth',
    description: 'Sign-in with email and password or an OpenID Connect provider, sessions (the atrium_session cookie), invites and password change',
  },
  { name: 'teams', description: 'The caller, teams, users and API keys' },
  { name: 'models', description: 'Team and system models' },
  { name: 'mcp-servers', description: 'The team\u2019s MCP servers, whose tools chat turns in its workspaces are offered' },
  { name: 'workspaces', description: 'Workspaces and their model settings' },
  { name: 'chat', description: 'Completions, streamed completions, threads and prompt logs' },
  { name: 'plus', description: 'Plus entries, their files and context' },
  { name: 'usage', description: 'Usage ledger reports, credit budgets and rate limits' },
  { name: 'audit', description: 'The audit log: who did what, when (team owners/admins; the instance admin sees every team)' },
  { name: 'openai', description: 'OpenAI-compatible API under /v1 (errors in OpenAI\u2019s shape, not problem+json)' },
];

const SUCCESS: Record<string, string> = { '200': 'OK', '201': 'Created', '204': 'No Content' };

/**
 * Final touches to the document @fastify/swagger derives from the route schemas, each stating
 * what the server does rather than adding to it:
 * - a query parameter with a `default` is filled in by the validator when absent, so it is not
 *   required of a client (the schema keeps it required so handlers see it typed as present);
 * - success answers get a description instead of "Default Response".
 */
interface Operation {
  parameters?: Array<{ in?: string; required?: boolean; schema?: { default?: unknown } }>;
  responses?: Record<string, { description?: string }>;
}

export const openapiTransform: SwaggerTransformObject = (document) => {
  if (!('openapiObject' in document)) return document.swaggerObject;
  const { openapiObject } = document;
  for (const item of Object.values(openapiObject.paths ?? {}) as Array<Record<string, Operation>>) {
    for (const op of Object.values(item)) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      for (const p of op.parameters ?? []) {
        if (p.in === 'query' && p.required && p.schema?.default !== undefined) p.required = false;
      }
      for (const [status, res] of Object.entries(op.responses)) {
        if (res.description === 'Default Response' && SUCCESS[status]) res.description = SUCCESS[status];
      }
    }
  }
  return openapiObject;
};
