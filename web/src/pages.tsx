/**
 * Path → screen, first match wins. Screens get the path's parameters; a new screen adds a line
 * here (and, for a main section, an entry in nav.ts).
 */
import type { VNode } from 'preact';
import { lazyScreen } from './components/Lazy';
import { match, type Params } from './router';
import { ChatScreen } from './screens/chat/ChatScreen';
import { NotFound } from './screens/NotFound';
import { WorkspaceForm } from './screens/workspaces/WorkspaceForm';
import { WorkspaceList } from './screens/workspaces/WorkspaceList';

// Part 2's screens, each a dynamic import so they do not weigh on the first screen.
const DocumentList = lazyScreen(() => import('./screens/documents/DocumentList').then((m) => m.DocumentList));
const NewDocument = lazyScreen(() => import('./screens/documents/DocumentScreen').then((m) => m.NewDocument));
const DocumentScreen = lazyScreen(() => import('./screens/documents/DocumentScreen').then((m) => m.DocumentScreen));
const ModelList = lazyScreen(() => import('./screens/models/ModelList').then((m) => m.ModelList));
const ModelForm = lazyScreen(() => import('./screens/models/ModelForm').then((m) => m.ModelForm));
const McpServersScreen = lazyScreen(() => import('./screens/mcp/McpServersScreen').then((m) => m.McpServersScreen));
const LogsScreen = lazyScreen(() => import('./screens/logs/LogsScreen').then((m) => m.LogsScreen));
const UsageScreen = lazyScreen(() => import('./screens/usage/UsageScreen').then((m) => m.UsageScreen));
const TeamScreen = lazyScreen(() => import('./screens/team/TeamScreen').then((m) => m.TeamScreen));
const AuditScreen = lazyScreen(() => import('./screens/audit/AuditScreen').then((m) => m.AuditScreen));
const AccountScreen = lazyScreen(() => import('./screens/team/AccountScreen').then((m) => m.AccountScreen));

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
  { path: '/documents', render: () => <DocumentList /> },
  { path: '/documents/new', render: () => <NewDocument /> },
  { path: '/documents/:plusId', render: (p) => <DocumentScreen key={p.plusId} plusId={p.plusId!} /> },
  { path: '/models', render: () => <ModelList /> },
  { path: '/models/new', render: () => <ModelForm key="new" system={new URLSearchParams(window.location.search).get('system') === 'true'} /> },
  { path: '/models/:modelId/edit', render: (p) => <ModelForm key={p.modelId} modelId={p.modelId!} /> },
  { path: '/mcp-servers', render: () => <McpServersScreen /> },
  { path: '/logs', render: () => <LogsScreen /> },
  { path: '/usage', render: () => <UsageScreen /> },
  { path: '/team', render: () => <TeamScreen /> },
  { path: '/audit', render: () => <AuditScreen /> },
  { path: '/account', render: () => <AccountScreen /> },
];

export function renderRoute(path: string): VNode {
  for (const r of ROUTES) {
    const params = match(r.path, path);
    if (params) return r.render(params);
  }
  return <NotFound />;
}
