/**
 * What every screen must pass, shared by the screen specs: nothing wider than the window, no
 * accessibility violation axe-core finds under WCAG 2.1 A/AA (every control named, readable
 * contrast, valid ARIA, labelled forms …), nothing the Content-Security-Policy blocked, and the
 * theme following the system.
 */
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { cspViolations, expect } from './fixtures.js';

export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/** `blocked`: what the screen is meant to have the policy refuse (a test's hostile content). */
export async function checkScreen(page: Page, name: string, scheme: 'light' | 'dark', blocked?: RegExp): Promise<void> {
  // the app scrolls inside <main class="screen">: neither the page nor that box may be wider than the window
  const fits = await page.evaluate(() => {
    const screen = document.querySelector('.screen');
    return document.documentElement.scrollWidth <= window.innerWidth && (!screen || screen.scrollWidth <= screen.clientWidth + 1);
  });
  expect.soft(fits, `${name} is wider than the window`).toBe(true);
  const { violations } = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
  const found = violations.flatMap((v) =>
    v.nodes.map((n) => `${v.id}: ${n.target.join(' ')} — ${n.failureSummary?.split('\n').slice(1, 2).join('') ?? v.help}`),
  );
  expect.soft(found, `${name}: accessibility violations`).toEqual([]);
  const refused = (await cspViolations(page)).filter((v) => !blocked?.test(v));
  expect.soft(refused, `${name}: what the Content-Security-Policy blocked`).toEqual([]);
  const dark = await page.evaluate(() => {
    const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\d+/g)!.map(Number) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 100;
  });
  expect(dark, `${name}: the ${scheme} theme`).toBe(scheme === 'dark');
}

const VIEWS = [
  { size: 'desktop', viewport: { width: 1280, height: 800 }, scheme: 'light' },
  { size: 'desktop', viewport: { width: 1280, height: 800 }, scheme: 'dark' },
  { size: 'phone', viewport: { width: 390, height: 844 }, scheme: 'light' },
  { size: 'phone', viewport: { width: 390, height: 844 }, scheme: 'dark' },
] as const;

/**
 * Checks the screen as it is now at desktop and phone width in light and dark (and, with
 * E2E_SHOTS=<dir>, saves each as `<name>-<size>-<scheme>.png`), then goes back to desktop light.
 */
export async function everyView(page: Page, name: string): Promise<void> {
  const shots = process.env.E2E_SHOTS;
  for (const v of VIEWS) {
    await page.setViewportSize(v.viewport);
    await page.emulateMedia({ colorScheme: v.scheme });
    const file = `${name}-${v.size}-${v.scheme}`;
    await checkScreen(page, file, v.scheme);
    if (!shots) continue;
    // the app scrolls inside .screen; let the page grow so the shot holds the whole screen
    const style = await page.addStyleTag({ content: '.shell { height: auto !important; } .screen { overflow: visible !important; }' });
    await page.screenshot({ path: path.join(shots, `${file}.png`), fullPage: true });
    await style.evaluate((el) => (el as HTMLElement).remove());
  }
  await page.setViewportSize(VIEWS[0].viewport);
  await page.emulateMedia({ colorScheme: 'light' });
}
