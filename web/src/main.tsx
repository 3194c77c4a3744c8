import { render } from 'preact';
import { App } from './app';
import { applyLanguage, applyTheme } from './settings';
import './styles.css';

applyTheme();

// The first screen speaks the chosen language at once (German is loaded first: i18n/index.ts);
// should its catalogue fail to load, the app opens in English.
void applyLanguage()
  .catch(() => undefined)
  .then(() => render(<App />, document.getElementById('app')!));

// Installable, and opening without a connection (web/service-worker.js, built into /sw.js; under
// Vite's development server there is none and registering fails quietly).
if ('serviceWorker' in navigator) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js').catch(() => {
      // An app that cannot be installed still works.
    });
  });
}
