import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf, publicOrigin } from '../../http/auth.js';
import { bodyErrorResponses, DeleteResponse, errorResponses, Uuid } from '../../http/schemas.js';
import { ChatSharing, ShareTokenParams } from './schema.js';
import type { ShareRow, ShareService } from './share.js';

/** Sharing a thread by link, the public page's data, and the team's sharing setting (share.ts). */
export const shareRoutes: FastifyPluginAsyncTypebox<{ share: ShareService; publicUrl: string | null }> = async (app, { share, publicUrl }) => {
  const tags = ['chat'];
  const WsThread = Type.Object({ workspaceId: Uuid, threadId: Uuid });
  const answer = (origin: string, s: ShareRow) => ({ url: `${origin}/share/${s.token}`, token: s.token, created: s.created.toISOString() });

  app.post(
    '/chat/:workspaceId/history/:threadId/share',
    {
      schema: {
        tags,
        operationId: 'shareChatThread',
        summary: 'Share a thread by a read-only link (as it reads now; sharing again moves the snapshot, the link stays)',
        params: WsThread,
        response: { 200: Type.Ref('ChatShare'), ...bodyErrorResponses },
      },
    },
    async (req) => answer(publicOrigin(req, publicUrl), await share.create(principalOf(req), req.params.workspaceId, req.params.threadId)),
  );
  app.get(
    '/chat/:workspaceId/history/:threadId/share',
    {
      schema: {
        tags,
        operationId: 'getChatThreadShare',
        summary: "The thread's share link (404 when it is not shared)",
        params: WsThread,
        response: { 200: Type.Ref('ChatShare'), ...errorResponses },
      },
    },
    async (req) => answer(publicOrigin(req, publicUrl), await share.get(principalOf(req), req.params.workspaceId, req.params.threadId)),
  );
  app.delete(
    '/chat/:workspaceId/history/:threadId/share',
    {
      schema: {
        tags,
        operationId: 'revokeChatThreadShare',
        summary: "Revoke the thread's share link: it answers 404 at once",
        params: WsThread,
        response: { 200: DeleteResponse, ...errorResponses },
      },
    },
    async (req) => {
      await share.revoke(principalOf(req), req.params.workspaceId, req.params.threadId);
      return { deleted: true };
    },
  );
  app.get(
    '/share/:token',
    {
      config: { public: true },
      schema: {
        tags,
        operationId: 'getSharedThread',
        summary: 'A shared thread as it was shared (no sign-in: the token is the key)',
        security: [],
        params: ShareTokenParams,
        response: { 200: Type.Ref('SharedThread'), ...errorResponses },
      },
    },
    async (req, reply) => {
      const view = await share.view(req.params.token);
      // revocable at once: never kept by a browser or a proxy
      reply.header('cache-control', 'no-store');
      return view;
    },
  );
  app.get(
    '/chat/sharing',
    {
      schema: {
        tags,
        operationId: 'getChatSharing',
        summary: "Whether the team's threads may be shared by link",
        response: { 200: Type.Ref('ChatSharing'), ...errorResponses },
      },
    },
    async (req) => share.sharing(principalOf(req)),
  );
  app.put(
    '/chat/sharing',
    {
      schema: {
        tags,
        operationId: 'setChatSharing',
        summary: 'Turn sharing by link on or off for the team (owner/admin); off revokes every link of the team',
        body: ChatSharing,
        response: { 200: Type.Ref('ChatSharing'), ...bodyErrorResponses },
      },
    },
    async (req) => share.setSharing(principalOf(req), req.body.enabled),
  );
};
