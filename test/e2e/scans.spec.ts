/**
 * A scan in the documents library, in a real browser: an image uploaded to a document set is read
 * by OCR, marked as such in its list of files (a badge with its meaning for screen readers), and
 * its sentence is found by a question.
 */
import { scanPdf, textImage } from '../ingest/scans.js';
import { expect, nav, signIn, test } from './fixtures.js';

test('documents: a scanned image is read by OCR and marked in the list of files', async ({ page }) => {
  await signIn(page);
  await nav(page).getByRole('link', { name: 'Documents' }).click();
  await page.getByRole('link', { name: 'New document set' }).click();
  await page.getByLabel('Title').fill('Scanned letters');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('heading', { name: 'Scanned letters' })).toBeVisible();

  await page.getByLabel('Files to upload').setInputFiles([
    { name: 'letter.png', mimeType: 'image/png', buffer: textImage(['The orchard harvest begins on the ninth of September.']) },
    { name: 'typed.md', mimeType: 'text/markdown', buffer: Buffer.from('# Typed\n\nA typed note about the mill.\n') },
  ]);
  const uploads = page.getByRole('list', { name: 'Uploads' });
  await expect(uploads.getByRole('listitem', { name: 'Upload of letter.png' })).toContainText('Added', { timeout: 60_000 });
  await expect(uploads.getByRole('listitem', { name: 'Upload of typed.md' })).toContainText('Added', { timeout: 60_000 });

  const files = page.getByRole('list', { name: 'Files' });
  const scan = files.getByRole('listitem').filter({ hasText: 'letter.png' });
  const typed = files.getByRole('listitem').filter({ hasText: 'typed.md' });
  await expect(scan).toContainText('image/png');
  // the badge reads "OCR" on screen and says what it means to a screen reader
  await expect(scan.locator('.badge')).toHaveText('OCR (scanned: text read by OCR)');
  await expect(scan.locator('.badge')).toHaveAttribute('title', /read by OCR/);
  await expect(typed.locator('.badge')).toHaveCount(0);
  await page.getByRole('button', { name: 'Show chunks of letter.png' }).click();
  await expect(page.getByRole('list', { name: 'Chunks of letter.png' })).toContainText('orchard harvest begins on the ninth of September');

  await page.getByRole('textbox', { name: 'Question' }).fill('When does the orchard harvest begin?');
  await page.getByRole('button', { name: 'Show context' }).click();
  await expect(page.getByLabel('Context for the question')).toContainText('ninth of September');

  // a scanned PDF: read and marked too (its "Reading by OCR: n of 4 pages read" shows only while the
  // server reads, which may end before the first poll; the progress route has its API tests)
  const pages = [['Page one of the ledger.'], ['Page two of the ledger.'], ['Page three of the ledger.'], ['Page four of the ledger.']];
  await page.getByLabel('Files to upload').setInputFiles([{ name: 'ledger.pdf', mimeType: 'application/pdf', buffer: scanPdf(pages) }]);
  const ledger = uploads.getByRole('listitem', { name: 'Upload of ledger.pdf' });
  await expect(ledger).toContainText('Added', { timeout: 90_000 });
  await expect(files.getByRole('listitem').filter({ hasText: 'ledger.pdf' }).locator('.badge')).toHaveText('OCR (scanned: text read by OCR)');
});
