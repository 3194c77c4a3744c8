/**
 * The workspace form's tools: which of the team's MCP servers its chats may use, and optionally
 * only some of their tools (names, one a line or comma-separated; empty: every tool).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, data, type Schemas } from '../../api/client';
import { t } from '../../i18n';

interface Props {
  serverIds: string[];
  onServerIds: (ids: string[]) => void;
  allowedText: string;
  onAllowedText: (text: string) => void;
  onError: (e: unknown) => void;
}

/** The allow-list as the API takes it: null when empty (every tool). */
export function allowedToolsOf(text: string): string[] | null {
  const names = [
    ...new Set(
      text
        .split(/[\n,]/)
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  return names.length > 0 ? names : null;
}

export function ToolsFieldset({ serverIds, onServerIds, allowedText, onAllowedText, onError }: Props) {
  const [servers, setServers] = useState<Array<Schemas['McpServer']> | null>(null);
  useEffect(() => {
    data(api.GET('/api/v1/mcp-servers')).then(setServers, onError);
  }, []);
  return (
    <fieldset>
      <legend>{t('ws.f.tools')}</legend>
      {servers === null && <p aria-busy="true">{t('tools.loadingServers')}</p>}
      {servers?.length === 0 && <p class="muted">{t('tools.noServers')}</p>}
      {servers?.map((s) => (
        <label key={s.id} class="check">
          <input
            type="checkbox"
            checked={serverIds.includes(s.id)}
            onChange={(e) => onServerIds(e.currentTarget.checked ? [...serverIds, s.id] : serverIds.filter((x) => x !== s.id))}
          />
          {s.name}
          {!s.enabled && <span class="badge">{t('tools.off')}</span>}
        </label>
      ))}
      {serverIds.length > 0 && (
        <label>
          {t('ws.f.onlyTools')}
          <textarea rows={2} placeholder={t('tools.everyTool')} value={allowedText} onInput={(e) => onAllowedText(e.currentTarget.value)} />
        </label>
      )}
      <p class="hint">{t('tools.hint')}</p>
    </fieldset>
  );
}
