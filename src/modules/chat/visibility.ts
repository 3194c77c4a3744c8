import { and, eq, ne, or, type SQL } from 'drizzle-orm';
import { chatThreads } from '../../db/schema/chat.js';
import { workspaces } from '../../db/schema/workspaces.js';
import type { Principal } from '../teams/service.js';
import type { WorkspaceRow } from '../workspaces/repo.js';
import { visibleWorkspaceSql } from '../workspaces/repo.js';
import type { ThreadScope } from './repo.js';

/**
 * Which threads a user reads (docs/API.md, Tenancy): those of the workspaces they see (the
 * workspaces module's rule), all of them when the workspace's history is TEAM, only the ones they
 * started when it is USER. One rule, in two forms kept side by side: `threadScope` for one
 * workspace already loaded (history, a turn), `readableThreadsSql` for a query over many
 * (conversation search). test/api/chat-search.test.ts checks that both find the same threads.
 */
export function threadScope(caller: Principal, ws: WorkspaceRow): ThreadScope {
  return ws.chatHistoryType === 'USER' ? { teamId: ws.teamId, workspaceId: ws.id, onlyUserId: caller.userId } : { teamId: ws.teamId, workspaceId: ws.id };
}

/** The same rule as `threadScope`, as a condition on `chat_threads` joined to its `workspaces` row (by team and id: workspaceJoinSql). */
export function readableThreadsSql(caller: Principal): SQL {
  return and(
    eq(chatThreads.teamId, caller.teamId),
    visibleWorkspaceSql(caller.teamId, caller.userId),
    or(ne(workspaces.chatHistoryType, 'USER'), eq(chatThreads.userId, caller.userId)),
  )!;
}
