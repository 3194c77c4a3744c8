/**
 * Path → screen, first match wins. Screens get the path's parameters; a new screen adds a line
 * here (and, for a main section, an entry in nav.ts).
 */
import type { VNode } from 'preact';
import { match, type Params } from './router';
import { ChatScreen } from './screens/chat/ChatScreen';
import { NotFound } from './screens/NotFound';
import { WorkspaceForm } from './screens/workspaces/WorkspaceForm';
import { WorkspaceList } from './screens/workspaces/WorkspaceList';

export interface Route {
  path: string;
  render: (p: Params) => VNode;
}

export const ROUTES: Route[] = [
  { path: '/', render: () => <WorkspaceList /> },
  { path: '/workspaces/new', render: () => <WorkspaceForm /> },
  { path: '/workspaces/:workspaceId/edit', render: (p) => <WorkspaceForm workspaceId={p.workspaceId!} /> },
  { path: '/w/:workspaceId', render: (p) => <ChatScreen key={p.workspaceId} workspaceId={p.workspaceId!} threadId={null} /> },
  { path: '/w/:workspaceId/t/:threadId', render: (p) => <ChatScreen key={p.workspaceId} workspaceId={p.workspaceId!} threadId={p.threadId!} /> },
];

export function renderRoute(path: string): VNode {
  for (const r of ROUTES) {
    const params = match(r.path, path);
    if (params) return r.render(params);
  }
  return <NotFound />;
}
