/**
 * Math in answers, in a real browser: TeX written inline and as blocks is rendered as MathML by
 * KaTeX (loaded only then), with its backslashes intact; prices in dollars stay prose; TeX that
 * KaTeX cannot read stays as the model wrote it. With E2E_SHOTS=<dir> the answer is saved at
 * desktop and phone size, light and dark.
 */
import path from 'node:path';
import { checkScreen } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

test('an answer with math shows it as MathML, and prose with dollars as prose', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Math ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Math', modelIds: [model.id] });
  atrium.standIn.set({
    reply: [
      'Euler wrote $e^{i\\pi} + 1 = 0$, and the sum is',
      '$$\n\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\n$$',
      'Greek too: \\(\\alpha_1 \\le \\beta_2\\). The book costs $5 and the pen $10.',
      'Broken: $\\frac{1}{$ stays text.',
    ].join('\n\n'),
  });
  const turn = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'Some maths, please' });
  atrium.standIn.reset();

  await signIn(page);
  await page.goto(`/w/${ws.id}/t/${turn.threadId}`);
  const answer = page.getByRole('article', { name: 'Answer' });
  await expect(answer.locator('math')).toHaveCount(3);
  await expect(answer.locator('math[display="block"]')).toHaveCount(1);
  await expect(answer.locator('math mfrac')).toHaveCount(1);
  // the TeX reached KaTeX as written: its annotation keeps every backslash
  await expect(answer.locator('annotation').first()).toHaveText('e^{i\\pi} + 1 = 0');
  await expect(answer.locator('annotation').nth(2)).toHaveText('\\alpha_1 \\le \\beta_2');
  await expect(answer).toContainText('The book costs $5 and the pen $10.');
  await expect(answer).toContainText('Broken:');

  if (process.env.E2E_SHOTS) {
    for (const scheme of ['light', 'dark'] as const) {
      for (const [size, viewport] of Object.entries({ desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } })) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.setViewportSize(viewport);
        await page.reload();
        await expect(answer.locator('math')).toHaveCount(3);
        await checkScreen(page, `math ${size} ${scheme}`, scheme);
        await page.screenshot({ path: path.join(process.env.E2E_SHOTS, `chat-math-${size}-${scheme}.png`) });
      }
    }
  }
});
