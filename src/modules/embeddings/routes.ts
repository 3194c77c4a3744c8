import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { bodyErrorResponses, errorResponses } from '../../http/schemas.js';
import { EmbeddingSettings, EmbeddingSettingsBody, RerankSettings, RerankSettingsBody } from './schema.js';
import type { EmbeddingsService } from './service.js';

export const embeddingRoutes: FastifyPluginAsyncTypebox<{ embeddings: EmbeddingsService }> = async (app, { embeddings }) => {
  const tags = ['plus'];
  app.get(
    '/embeddings/settings',
    {
      schema: {
        tags,
        operationId: 'getEmbeddingSettings',
        summary: "The team's embedding model for its Plus entries, and embedding progress",
        response: { 200: EmbeddingSettings, ...errorResponses },
      },
    },
    async (req) => embeddings.settings(principalOf(req)),
  );
  app.put(
    '/embeddings/settings',
    {
      schema: {
        tags,
        operationId: 'setEmbeddingSettings',
        summary: "Choose the team's embedding model (owner/admin); every file is (re-)embedded in the background",
        body: EmbeddingSettingsBody,
        response: { 200: EmbeddingSettings, ...bodyErrorResponses },
      },
    },
    async (req) => embeddings.choose(principalOf(req), req.body.embeddingModelId),
  );
  app.get(
    '/embeddings/rerank',
    {
      schema: {
        tags,
        operationId: 'getRerankSettings',
        summary: "The team's rerank model, which orders retrieval's best candidates for its Plus entries",
        response: { 200: RerankSettings, ...errorResponses },
      },
    },
    async (req) => embeddings.reranker.settings(principalOf(req)),
  );
  app.put(
    '/embeddings/rerank',
    {
      schema: {
        tags,
        operationId: 'setRerankSettings',
        summary: "Choose the team's rerank model (owner/admin); null: retrieval's own order",
        body: RerankSettingsBody,
        response: { 200: RerankSettings, ...bodyErrorResponses },
      },
    },
    async (req) => embeddings.reranker.choose(principalOf(req), req.body.rerankModelId),
  );
};
