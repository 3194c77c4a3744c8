/**
 * The chat screen: sidebar (workspace, threads), the conversation, the composer. It owns the
 * thread shown and the turn in flight (one at a time): send, stop (button or Esc), regenerate.
 * The drawer and the screen's keys are drawer.ts's; the files and Plus entries the chat draws on,
 * files.ts's.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, data, type ChatThread, type PlusSummary, type Source, type Workspace } from '../../api/client';
import { isTeamAdmin } from '../../components/format';
import { Link } from '../../components/Link';
import { ErrorNote } from '../../components/Problem';
import { navigate } from '../../router';
import { useSession } from '../../session';
import { Composer } from './Composer';
import { useComposerImages } from './images';
import { Conversation } from './Conversation';
import { useChatDrawer } from './drawer';
import { ExportMenu } from './ExportMenu';
import type { MessageActionHandlers } from './MessageActions';
import { ShareButton } from './ShareDialog';
import { useChatShortcuts } from './shortcuts';
import { usePromptLibrary } from './PromptMenu';
import { readBack, switchVersion } from './versions';
import { useChatFiles } from './files';
import { LiveAnswer } from './live';
import { SourceDialog } from './SourceDialog';
import type { SearchHit } from './SearchChats';
import { ThreadList } from './ThreadList';
import { streamTurn, type TurnBody } from './turn';
import { fromStored, lastModel, type ChatItem } from './types';
import { preferredModel } from '../../settings';
import { t } from '../../i18n';

let localKeys = 0;
/** The "Search chats" text survives opening a result in another workspace (a new screen). */
let lastQuery = '';
/** The message to show of the thread opened (`?m=<messageId>`: a search result). */
const focusParam = () => new URLSearchParams(window.location.search).get('m');
/** Messages fetched at a time: a thread opens with its last PAGE, earlier ones come as the reader scrolls up. */
const PAGE = 30;

export function ChatScreen({ workspaceId, threadId }: { workspaceId: string; threadId: string | null }) {
  const { me } = useSession();
  const [workspaces, setWorkspaces] = useState<Workspace[]>([]);
  const [workspace, setWorkspace] = useState<Workspace | null>(null);
  const [threads, setThreads] = useState<ChatThread[] | null>(null);
  const [items, setItems] = useState<ChatItem[]>([]);
  const [hasEarlier, setHasEarlier] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [threadError, setThreadError] = useState<unknown>(null);
  const [greeting, setGreeting] = useState<string | null>(null);
  const [samples, setSamples] = useState<string[]>([]);
  const [modelId, setModelId] = useState('');
  const [plus, setPlus] = useState<PlusSummary[] | null>(null);
  const [streaming, setStreaming] = useState(false);
  const [source, setSource] = useState<Source | null>(null);
  const [followKey, setFollowKey] = useState(0);
  const [query, setQuery] = useState(lastQuery);
  const [focus, setFocus] = useState<{ id: string; n: number } | null>(null);
  const live = useMemo(() => new LiveAnswer(), []);
  const abort = useRef<AbortController | null>(null);
  /** The thread whose messages `items` holds (set by a new chat's first answer, before the URL changes). */
  const shownThread = useRef<string | null | undefined>(undefined);
  // Set when the person picks a model in the thread shown: its history, arriving later, then leaves the choice alone.
  const pickedModel = useRef(false);
  const pickModel = useCallback((id: string) => {
    pickedModel.current = true;
    setModelId(id);
  }, []);
  /** Counts thread switches: a turn's late events must not land in another thread's view. */
  const view = useRef(0);
  const files = useChatFiles(workspace?.name, () => shownThread.current ?? null);
  const images = useComposerImages(modelId, workspace?.models.find((m) => m.modelId === modelId)?.modelName ?? null);
  const stop = useCallback(() => abort.current?.abort(), []);
  const stopTurn = useCallback(() => {
    if (!abort.current) return false;
    stop();
    return true;
  }, [stop]);
  const { open: sidebarOpen, setOpen: setSidebarOpen, toggle: sidebarToggle, drawer: sidebar, searchInput } = useChatDrawer(stopTurn);

  const refreshThreads = useCallback(() => {
    data(api.GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId } } })).then(setThreads, setError);
  }, [workspaceId]);

  useEffect(() => {
    data(api.GET('/api/v1/workspaces/{workspaceId}', { params: { path: { workspaceId } } })).then((w) => {
      setWorkspace(w);
      setModelId((cur) => (w.models.some((m) => m.modelId === cur) ? cur : preferredModel(w.models)));
    }, setError);
    data(api.GET('/api/v1/workspaces')).then(setWorkspaces, () => undefined);
    data(api.GET('/api/v1/plus', { params: { query: { showPublic: true } } })).then(setPlus, () => setPlus([]));
    refreshThreads();
  }, [workspaceId, refreshThreads]);

  // Open the thread in the URL (unless it is the one just created by this screen's turn).
  useEffect(() => {
    if (shownThread.current === threadId) return;
    view.current += 1;
    abort.current?.abort();
    abort.current = null;
    setStreaming(false);
    live.set(null);
    shownThread.current = threadId;
    pickedModel.current = false;
    files.openThread(threadId);
    setItems([]);
    setHasEarlier(false);
    setThreadError(null);
    setSidebarOpen(false);
    if (!threadId) {
      data(api.GET('/api/v1/chat/{workspaceId}/greeting', { params: { path: { workspaceId } } })).then(
        (g) => setGreeting(g.content || null),
        () => setGreeting(null),
      );
      data(api.GET('/api/v1/chat/{workspaceId}/sample-prompts', { params: { path: { workspaceId } } })).then(
        (s) => setSamples(s.map((p) => p.content)),
        () => setSamples([]),
      );
      return;
    }
    // A search result's message may be far back: such a thread opens with as many messages as a page holds.
    const m = focusParam();
    data(api.GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId }, query: { limit: m ? 1000 : PAGE } } })).then(
      async (t) => {
        if (shownThread.current !== threadId) return;
        // A result in another version (an edited question, a regenerated answer): its branch becomes the one shown.
        if (m && !t.messages.some((x) => x.id === m)) t = await showBranch(threadId, m).catch(() => t);
        if (shownThread.current !== threadId) return;
        const loaded = t.messages.map(fromStored);
        setItems(loaded);
        setHasEarlier(t.hasEarlier === true);
        // The thread keeps the model it was last answered by (if the workspace still has it).
        const model = lastModel(loaded);
        if (model && !pickedModel.current) setModelId(model);
        if (m) setFocus({ id: m, n: ++localKeys });
      },
      setThreadError,
    );
  }, [workspaceId, threadId, live]);

  // A model the workspace does not have (any more) gives way to the person's default or the workspace's first.
  useEffect(() => {
    if (workspace && !workspace.models.some((m) => m.modelId === modelId)) setModelId(preferredModel(workspace.models));
  }, [workspace, modelId]);

  const loadEarlier = useCallback(async () => {
    const first = items.find((m) => m.id);
    const forThread = shownThread.current;
    if (!first || !forThread) return null;
    const page = await data(
      api.GET('/api/v1/chat/{workspaceId}/history/{threadId}', {
        params: { path: { workspaceId, threadId: forThread }, query: { limit: PAGE, before: first.id! } },
      }),
    );
    if (shownThread.current !== forThread) return null;
    return () => {
      const known = new Set(items.map((m) => m.key));
      setItems((prev) => [...page.messages.map(fromStored).filter((m) => !known.has(m.key)), ...prev]);
      setHasEarlier(page.hasEarlier === true);
    };
  }, [items, workspaceId]);

  useEffect(() => () => abort.current?.abort(), []);

  /**
   * One turn. `text`: the question shown (null: a regenerate, whose question is the stored one);
   * the conversation keeps its first `keep` items (an edit or a regenerate replaces what follows);
   * `version` names what the turn is a new version of.
   */
  const ask = (text: string | null, keep: number, version: { editOf: string } | { regenerate: string } | null = null): boolean => {
    if (abort.current || !workspace) return false;
    const ctrl = new AbortController();
    abort.current = ctrl;
    const started = shownThread.current ?? null;
    const myView = view.current;
    const plusIds = files.selectedPlus;
    const previews = images.pending.map((i) => i.preview);
    const sentImages = text === null ? [] : images.take();
    const asked: ChatItem[] =
      text === null
        ? []
        : [{ key: `local-${++localKeys}`, role: 'user', content: text, status: 'ok', sources: [], modelId: null, ...(previews.length ? { previews } : {}) }];
    setItems((prev) => [...prev.slice(0, keep), ...asked]);
    live.set({ key: `live-${++localKeys}`, role: 'assistant', content: '', status: 'streaming', sources: [], modelId: modelId || null });
    setStreaming(true);
    setFollowKey((k) => k + 1);
    const body: TurnBody = {
      ...(text !== null ? { prompt: text } : {}),
      ...(version ?? {}),
      ...(modelId ? { modelId } : {}),
      ...(started ? { threadId: started } : {}),
      ...(plusIds.length ? { plusIds } : {}),
      ...(sentImages.length ? { images: sentImages } : {}),
    };
    void streamTurn(
      workspaceId,
      body,
      {
        onStart(e) {
          live.update({ modelId: e.modelId });
          if (!started && view.current === myView) {
            shownThread.current = e.threadId;
            files.rememberFor(e.threadId, plusIds);
            navigate(`/w/${workspaceId}/t/${e.threadId}`);
          }
        },
        onSources: (sources) => live.update({ sources }),
        onDelta: (t) => live.append(t),
        onToolCall: (c) => live.update({ toolCalls: [...(live.get()?.toolCalls ?? []), { ...c, startedAt: Date.now() }] }),
        onToolResult: (r) =>
          live.update({
            toolCalls: (live.get()?.toolCalls ?? []).map((c) =>
              c.id === r.id ? { ...c, ok: r.ok, content: r.content, durationMs: Date.now() - (c.startedAt ?? Date.now()) } : c,
            ),
          }),
        onImage: (img) => live.update({ images: [...(live.get()?.images ?? []), img] }),
        onEnd(end) {
          if (abort.current === ctrl) {
            abort.current = null;
            setStreaming(false);
          }
          if (view.current !== myView) return refreshThreads();
          const cur = live.get();
          live.set(null);
          if (cur) {
            const status = end.kind === 'ok' ? 'ok' : end.kind === 'interrupted' ? 'interrupted' : 'error';
            setItems((prev) => [...prev, { ...cur, status, ...(end.kind === 'error' || end.kind === 'lost' ? { problem: end.problem } : {}) }]);
          }
          // what was stored takes the place of what this visit showed (ids and versions: Edit, Regenerate)
          const forThread = shownThread.current;
          if (forThread)
            void readBack(workspaceId, forThread, PAGE).then((put) => {
              if (put && view.current === myView && shownThread.current === forThread) setItems(put);
            });
          refreshThreads();
        },
      },
      ctrl.signal,
    );
    return true;
  };

  const send = (text: string) => ask(text, items.length);
  /** A new answer to the last question, kept beside the one it replaces (never the question again). */
  const regenerate = () => {
    const last = items.at(-1);
    if (last?.role === 'assistant' && last.id) return void ask(null, items.length - 1, { regenerate: last.id });
    // a turn refused before anything was stored (its question has no id either): ask it again in its place
    const q = items.findLastIndex((m) => m.role === 'user');
    if (q >= 0 && !items[q]!.id) ask(items[q]!.content, q);
  };

  /** Shows another version of a stored message: the thread's active path changes to go through it. */
  const showVersion = (item: ChatItem, step: -1 | 1) => {
    const forThread = shownThread.current;
    if (!forThread || abort.current) return;
    switchVersion(workspaceId, forThread, item, step).then((loaded) => {
      if (!loaded || shownThread.current !== forThread) return;
      setItems(loaded);
      setHasEarlier(false);
    }, setError);
  };
  const actions = useMemo<MessageActionHandlers | undefined>(
    () =>
      streaming
        ? undefined
        : {
            onEdit: (item, text) => {
              const i = items.findIndex((m) => m.key === item.key);
              if (i >= 0 && item.id) ask(text, i, { editOf: item.id });
            },
            onVersion: showVersion,
          },
    [streaming, items],
  );

  /** Makes the path through a message the thread's active one (a search result in another version): the thread as it then reads. */
  const showBranch = (forThread: string, messageId: string) =>
    data(api.POST('/api/v1/chat/{workspaceId}/history/{threadId}/active', { params: { path: { workspaceId, threadId: forThread } }, body: { messageId } }));

  const onQuery = (q: string) => {
    lastQuery = q;
    setQuery(q);
  };
  const openHit = (h: SearchHit) => {
    setSidebarOpen(false);
    if (h.workspaceId === workspaceId && h.threadId === threadId) {
      navigate(`/w/${workspaceId}/t/${threadId}?m=${h.messageId}`, { replace: true });
      if (items.some((x) => x.id === h.messageId) || abort.current) return setFocus({ id: h.messageId, n: ++localKeys });
      // not on the path shown: switch to its branch first
      showBranch(threadId, h.messageId).then((t) => {
        if (shownThread.current !== threadId) return;
        setItems(t.messages.map(fromStored));
        setHasEarlier(false);
        setFocus({ id: h.messageId, n: ++localKeys });
      }, setError);
    } else navigate(`/w/${h.workspaceId}/t/${h.threadId}?m=${h.messageId}`);
  };

  const library = usePromptLibrary(workspaceId);
  const shortcuts = useChatShortcuts({
    newChat: () => navigate(`/w/${workspaceId}`),
    focusComposer: () => document.querySelector<HTMLTextAreaElement>('.composer-box textarea')?.focus(),
    lastAnswer: () => items.findLast((m) => m.role === 'assistant')?.content ?? null,
  });
  const modelNames = useMemo(() => new Map(workspace?.models.map((m) => [m.modelId, m.modelName]) ?? []), [workspace]);
  const modelName = useCallback((id: string | null) => (id ? (modelNames.get(id) ?? null) : null), [modelNames]);
  const showSource = useCallback((s: Source) => setSource(s), []);
  // After a failed answer (also one stored and shown after a reload), Retry asks its question again.
  const retry = useMemo(() => (streaming ? undefined : regenerate), [streaming, items]);

  if (error && !workspace)
    return (
      <section class="page">
        <ErrorNote error={error} />
        <Link href="/">{t('chat.backToWorkspaces')}</Link>
      </section>
    );
  if (!workspace)
    return (
      <p class="loading" aria-busy="true">
        {t('common.loading')}
      </p>
    );

  // the API lets the creator and owners/admins change a workspace or a thread; nobody else sees the controls
  const canEdit = workspace.userId === me.user.id || isTeamAdmin(me.user.role);
  const thread = threads?.find((t) => t.id === threadId);
  const last = items.at(-1);
  return (
    <div class={`chat ${sidebarOpen ? 'sidebar-open' : ''}`}>
      <aside class="chat-sidebar" aria-label={t('chat.sidebar')} ref={sidebar}>
        <ThreadList
          workspaces={workspaces.length ? workspaces : [workspace]}
          workspace={workspace}
          threads={threads}
          currentId={threadId}
          canEdit={canEdit}
          canChange={(t) => t.userId === me.user.id || isTeamAdmin(me.user.role)}
          onNavigate={() => setSidebarOpen(false)}
          search={{ query, onQuery, onPick: openHit, inputRef: searchInput }}
          onRename={async (t, title) => {
            await data(api.POST('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId: t.id } }, body: { title } })).catch(
              setError,
            );
            refreshThreads();
          }}
          onPin={async (t, pinned) => {
            await data(
              api.PATCH('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId: t.id } }, body: { pinned } }),
            ).catch(setError);
            refreshThreads();
          }}
          onDelete={async (t) => {
            await data(api.DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId: t.id } } })).catch(setError);
            if (t.id === threadId) navigate(`/w/${workspaceId}`);
            refreshThreads();
          }}
        />
      </aside>
      {sidebarOpen && <button type="button" class="sidebar-backdrop" aria-label={t('chat.hideChats')} onClick={() => setSidebarOpen(false)} />}
      <section class="chat-main" aria-label={t('chat.main')}>
        <header class="chat-head">
          <button type="button" class="ghost sidebar-toggle" ref={sidebarToggle} aria-expanded={sidebarOpen} onClick={() => setSidebarOpen(!sidebarOpen)}>
            {t('chat.chats')}
          </button>
          <h1>{threadId ? (thread?.title ?? t('chat.main')) : t('chat.newChat')}</h1>
          <span class="muted small ws-name">{workspace.name}</span>
          {shortcuts.button}
          {threadId && thread && <ShareButton workspaceId={workspaceId} threadId={threadId} />}
          {threadId && thread && <ExportMenu workspaceId={workspaceId} threadId={threadId} />}
        </header>
        {error !== null && <ErrorNote error={error} />}
        <Conversation
          items={items}
          live={live}
          modelName={modelName}
          onShowSource={showSource}
          onRetry={retry}
          actions={actions}
          hasEarlier={hasEarlier}
          onLoadEarlier={loadEarlier}
          resetKey={threadId ?? 'new'}
          focus={focus}
          followKey={followKey}
          empty={
            threadError ? (
              <ErrorNote error={threadError} />
            ) : !threadId ? (
              <div class="empty-chat">
                <p class="greeting">{greeting ?? t('chat.askAnything', { name: workspace.name })}</p>
                {samples.length > 0 && (
                  <ul class="samples" aria-label={t('chat.samples')}>
                    {samples.map((s) => (
                      <li key={s}>
                        <button type="button" onClick={() => send(s)} disabled={streaming}>
                          {s}
                        </button>
                      </li>
                    ))}
                  </ul>
                )}
              </div>
            ) : null
          }
          footer={
            !streaming && last?.role === 'assistant' && last.status !== 'error' && last.id ? (
              <div class="after-answer">
                <button type="button" class="ghost small" onClick={regenerate}>
                  {t('chat.regenerate')}
                </button>
              </div>
            ) : null
          }
        />
        {workspace.models.length === 0 && <p class="error-note">{t('chat.noModel')}</p>}
        <Composer
          streaming={streaming}
          onSend={send}
          onStop={stop}
          models={workspace.models}
          modelId={modelId}
          onModel={pickModel}
          plus={plus}
          selectedPlus={files.selectedPlus}
          onTogglePlus={files.togglePlus}
          uploads={files.uploads}
          onFiles={files.onFiles}
          onDismissUpload={files.dismissUpload}
          prompts={library}
          images={images}
        />
      </section>
      {source && <SourceDialog source={source} onClose={() => setSource(null)} />}
      {shortcuts.view}
    </div>
  );
}
