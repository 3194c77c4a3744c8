/**
 * The tools an answer called on its way, each collapsed to one line (name, how it went, time);
 * opened, the arguments and the result as the model got them. While a call runs it says so.
 */
import type { ToolCallItem } from './types';
import { formatDecimal } from '../../components/format';
import { t } from '../../i18n';

function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

export function ToolCalls({ calls }: { calls: ToolCallItem[] }) {
  return (
    <div class="tool-calls" aria-label={t('tools.label')}>
      {calls.map((c) => (
        <details key={c.id} class={`tool-call ${c.ok === undefined ? 'running' : c.ok ? 'ok' : 'failed'}`}>
          <summary>
            <code>{c.name}</code>{' '}
            <span class="muted">
              {c.ok === undefined ? t('tools.running') : c.ok ? t('tools.done') : t('tools.failed')}
              {c.durationMs !== undefined && ` · ${c.durationMs < 1000 ? `${c.durationMs} ms` : `${formatDecimal(c.durationMs / 1000, 1)} s`}`}
            </span>
          </summary>
          <div class="tool-call-body">
            <div class="muted small">{t('tools.arguments')}</div>
            <pre>{pretty(c.arguments || '{}')}</pre>
            {c.content !== undefined && (
              <>
                <div class="muted small">{c.ok ? t('tools.result') : t('tools.error')}</div>
                <pre>{c.content}</pre>
              </>
            )}
          </div>
        </details>
      ))}
    </div>
  );
}
