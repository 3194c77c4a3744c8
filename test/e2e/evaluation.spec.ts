/**
 * A document set's evaluation set in a real browser: questions added with their passages, edited
 * and removed, "Run", the last run's figures in words and each question's place; every view
 * (desktop and phone, light and dark) passes the screen checks.
 */
import { everyView } from './checks.js';
import { expect, nav, signIn, test } from './fixtures.js';

const HANDBOOK = [
  '# Office handbook',
  '',
  '## Refunds',
  '',
  'Reimbursement is granted within thirty days of delivery, on the original card.',
  '',
  '## Parking',
  '',
  'The parking garage is at the back of the building; its gate opens with the staff badge.',
  '',
].join('\n');

test('documents: an evaluation set is kept, run and shown in words', async ({ page }) => {
  await signIn(page);
  await nav(page).getByRole('link', { name: 'Documents' }).click();
  await page.getByRole('link', { name: 'New document set' }).click();
  await page.getByLabel('Title').fill('Office handbook');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('heading', { name: 'Office handbook' })).toBeVisible();
  await page.getByLabel('Files to upload').setInputFiles([{ name: 'handbook.md', mimeType: 'text/markdown', buffer: Buffer.from(HANDBOOK) }]);
  await expect(page.getByRole('list', { name: 'Uploads' }).getByRole('listitem', { name: 'Upload of handbook.md' })).toContainText('Added', {
    timeout: 60_000,
  });

  const panel = page.getByRole('region', { name: 'Evaluation set' });
  await expect(panel).toContainText('No question yet.');
  // nothing to run yet
  await expect(panel.getByRole('button', { name: 'Run' })).toBeDisabled();

  const add = panel.getByRole('form', { name: 'Add a question' });
  const addQuestion = async (question: string, passage: string) => {
    await add.getByRole('textbox', { name: 'What someone asks' }).fill(question);
    await add.getByRole('textbox', { name: 'Passage that answers it' }).fill(passage);
    await add.getByRole('button', { name: 'Add question' }).click();
    await expect(panel.getByRole('list', { name: 'Evaluation questions' })).toContainText(question);
  };
  await addQuestion('Within how many days am I reimbursed?', 'reimbursement is granted within thirty days');
  // quoted wrongly: no document holds this passage
  await addQuestion('How do I get my money back for an order?', 'Refunds are paid in cash.');
  await addQuestion('Where is the gym?', 'The gym is on the roof.');

  const list = panel.getByRole('list', { name: 'Evaluation questions' });
  await expect(list.getByRole('listitem')).toHaveCount(3);
  await expect(list).toContainText('Not run yet');

  // edit one question's passage
  await list.getByRole('button', { name: 'Edit question: Where is the gym?' }).click();
  const edit = list.getByRole('form', { name: 'Edit question' });
  await edit.getByRole('textbox', { name: 'What someone asks' }).fill('Where do I park?');
  await edit.getByRole('textbox', { name: 'Passage that answers it' }).fill('The parking garage is at the back of the building');
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(list).toContainText('Where do I park?');
  await expect(list).not.toContainText('Where is the gym?');

  await panel.getByRole('button', { name: 'Run' }).click();
  await expect(panel.getByLabel('Last run')).toContainText('Found the right passage in the top 5 for 2 of 3 questions.');
  const item = (q: string) => list.getByRole('listitem').filter({ hasText: q });
  await expect(item('Within how many days am I reimbursed?')).toContainText('Found first');
  await expect(item('How do I get my money back for an order?')).toContainText('The documents do not contain this passage');
  await expect(item('Where do I park?')).toContainText(/Found (first|\d+(st|nd|rd|th))/);
  await expect(panel.getByLabel('Last run')).toContainText('Recall@5');
  await expect(panel.getByLabel('Last run')).toContainText('full-text search');

  await everyView(page, 'documents-evaluation');

  // remove the question with the wrong passage, with confirmation; the figures stay those of the last run until it runs again
  await list.getByRole('button', { name: 'Delete question: How do I get my money back for an order?' }).click();
  await list.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(list.getByRole('listitem')).toHaveCount(2);
  await panel.getByRole('button', { name: 'Run' }).click();
  await expect(panel.getByLabel('Last run')).toContainText('Found the right passage in the top 5 for 2 of 2 questions.');

  // a reload shows the kept set and its last run
  await page.reload();
  await expect(page.getByRole('region', { name: 'Evaluation set' }).getByLabel('Last run')).toContainText('for 2 of 2 questions');
});
