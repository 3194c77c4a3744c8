import { Link } from '../components/Link';
import { t } from '../i18n';

export function NotFound() {
  return (
    <section class="page">
      <h1>{t('notFound.title')}</h1>
      <p>
        {t('notFound.body')} <Link href="/">{t('chat.backToWorkspaces')}</Link>
      </p>
    </section>
  );
}
