/**
 * MCP servers: the team's tool servers. Owners/admins add one (name, URL, custom headers), test it
 * (connect and list its tools), switch it on or off and delete it; members see the list. Header
 * values are secrets: the server never sends them back, so the list shows their names only, and
 * changing them means typing them all again. A workspace picks its servers in its own form.
 */
import '../../components/admin.css';
import { useState } from 'preact/hooks';
import { api, data, type Schemas } from '../../api/client';
import { ConfirmButton } from '../../components/ConfirmButton';
import { isTeamAdmin } from '../../components/format';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { useSubmit } from '../../components/useSubmit';
import { useSession } from '../../session';
import { t } from '../../i18n';

type Server = Schemas['McpServer'];
type TestResult = Schemas['McpServerTest'];

/** "Name: value" lines as a header object; a line without a colon is refused here, before sending. */
export function parseHeaders(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (!line) continue;
    const i = line.indexOf(':');
    if (i <= 0) throw new Error(t('mcp.headerForm', { line: line.slice(0, 60) }));
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

const LABELS = () => ({ name: t('ws.f.name'), url: 'URL', headers: t('mcp.headers') });

export function McpServersScreen() {
  const { me } = useSession();
  const admin = isTeamAdmin(me.user.role);
  const list = useLoad(() => data(api.GET('/api/v1/mcp-servers')), []);
  const [error, setError] = useState<unknown>(null);
  return (
    <section class="page stack">
      <div class="page-head">
        <h1>{t('nav.mcp')}</h1>
      </div>
      <p class="muted">{t('mcp.intro')}</p>
      <ErrorNote error={list.error ?? error} />
      {list.loading && !list.value && <p aria-busy="true">{t('common.loading')}</p>}
      {list.value?.length === 0 && <p class="muted">{t('mcp.none')}</p>}
      {list.value && list.value.length > 0 && (
        <ul class="model-list" aria-label={t('nav.mcp')}>
          {list.value.map((s) => (
            <ServerRow key={s.id} server={s} admin={admin} onChanged={list.reload} onError={setError} />
          ))}
        </ul>
      )}
      {admin && <AddServer onAdded={list.reload} />}
    </section>
  );
}

function ServerRow({ server: s, admin, onChanged, onError }: { server: Server; admin: boolean; onChanged: () => void; onError: (e: unknown) => void }) {
  const [result, setResult] = useState<TestResult | null>(null);
  const [testing, setTesting] = useState(false);
  const test = () => {
    setTesting(true);
    setResult(null);
    data(api.POST('/api/v1/mcp-servers/{serverId}/test', { params: { path: { serverId: s.id } } }))
      .then(setResult, onError)
      .finally(() => setTesting(false));
  };
  const toggle = () =>
    data(api.PATCH('/api/v1/mcp-servers/{serverId}', { params: { path: { serverId: s.id } }, body: { enabled: !s.enabled } })).then(onChanged, onError);
  const remove = () => data(api.DELETE('/api/v1/mcp-servers/{serverId}', { params: { path: { serverId: s.id } } })).then(onChanged, onError);
  return (
    <li class="card model-row">
      <div class="file-head">
        <div class="file-meta">
          <strong>
            {s.name} {!s.enabled && <span class="badge">{t('tools.off')}</span>}
          </strong>
          <span class="muted small">
            {s.url}
            {s.headerNames.length > 0 && ` · ${t('mcp.headerNames', { names: s.headerNames.join(', ') })}`}
          </span>
        </div>
        {admin && (
          <div class="actions">
            <button type="button" class="small-button" aria-label={t('mcp.testNamed', { name: s.name })} disabled={testing} onClick={test}>
              {testing ? t('test.busy') : t('model.test')}
            </button>
            <button
              type="button"
              class="small-button"
              aria-label={s.enabled ? t('mcp.offNamed', { name: s.name }) : t('mcp.onNamed', { name: s.name })}
              onClick={() => void toggle()}
            >
              {s.enabled ? t('mcp.off') : t('mcp.on')}
            </button>
            <ConfirmButton label={t('common.delete')} what={s.name} onConfirm={remove} />
          </div>
        )}
      </div>
      {result?.ok && (
        <div class="ok-note" role="status">
          <strong>{t('test.connected')}</strong>: {t('mcp.tools', { count: result.tools.length })}
          <ul class="tool-names" aria-label={t('mcp.toolsOf', { name: s.name })}>
            {result.tools.map((t) => (
              <li key={t.name}>
                <code>{t.name}</code> {t.description && <span class="muted small">— {t.description}</span>}
              </li>
            ))}
          </ul>
        </div>
      )}
      {result && !result.ok && (
        <div class="error-note" role="alert">
          <strong>{t('test.failed')}</strong> {result.error}
        </div>
      )}
    </li>
  );
}

function AddServer({ onAdded }: { onAdded: () => void }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [headers, setHeaders] = useState('');
  const submit = useSubmit();
  const save = async () => {
    const parsed = parseHeaders(headers);
    await data(
      api.POST('/api/v1/mcp-servers', {
        body: { name: name.trim(), url: url.trim(), enabled: true, ...(Object.keys(parsed).length ? { headers: parsed } : {}) },
      }),
    );
    setName('');
    setUrl('');
    setHeaders('');
    onAdded();
  };
  return (
    <form class="card stack" aria-label={t('mcp.addLabel')} onSubmit={submit.handler(save)}>
      <h2>{t('mcp.addTitle')}</h2>
      <label>
        {t('ws.f.name')}
        <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        URL
        <input required type="url" maxLength={2048} placeholder="https://tools.example.com/mcp" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </label>
      <label>
        {t('mcp.headers')}
        <textarea rows={2} placeholder="Authorization: Bearer …" value={headers} onInput={(e) => setHeaders(e.currentTarget.value)} />
      </label>
      <p class="hint">{t('mcp.headersHint')}</p>
      <ErrorNote error={submit.error} labels={LABELS()} />
      <div class="actions">
        <button type="submit" class="primary" disabled={submit.busy}>
          {submit.busy ? t('mcp.adding') : t('mcp.add')}
        </button>
      </div>
    </form>
  );
}
