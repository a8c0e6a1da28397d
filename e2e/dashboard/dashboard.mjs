// Drives a Portage admin dashboard in the system's headless Chromium and reports what a person
// would see, one line per step on stdout:
//   LOADED <field>=<value> sections=<title|title|...> updated=<text>   the page shows live numbers
//   CHANGED <field>=<value>                                             the number changed on screen
//   BANNER <text>                                                       the error banner after the server went away
// Usage: node dashboard.mjs <dashboard-url> <section> <field> [screenshot-dir]
// Exits 0 when all three happened, 1 (with "FAIL <reason>" on stderr) otherwise. The caller changes
// the state after LOADED and stops the server after CHANGED.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const [url, section, field, shots] = process.argv.slice(2);
if (!url || !section || !field) {
  console.error('usage: node dashboard.mjs <dashboard-url> <section> <field> [screenshot-dir]');
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const STEP_MS = Number(process.env.STEP_TIMEOUT_MS || 15000);
const selector = `section[data-section="${section}"] tr[data-field="${field}"] td`;

let browser;
async function screenshot(page, name) {
  if (shots) {
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, name + '.png'), fullPage: true });
  }
}

try {
  browser = await chromium.launch({
    executablePath,
    headless: true,
    // Root in a container has no user namespaces for Chromium's sandbox; the rest keeps Chromium
    // from calling out to the internet (this machine's network is closed) at every start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const response = await page.goto(url, { timeout: STEP_MS });
  if (!response || response.status() !== 200) {
    throw new Error(`GET ${url} answered ${response ? response.status() : 'nothing'}`);
  }

  await page.waitForSelector(selector, { timeout: STEP_MS });
  await page.waitForFunction(() => document.getElementById('updated').textContent.startsWith('last updated'),
    null, { timeout: STEP_MS });
  const first = (await page.textContent(selector)).trim();
  const titles = await page.$$eval('section[data-section]', (els) => els.map((e) => e.dataset.section));
  const updated = await page.textContent('#updated');
  console.log(`LOADED ${field}=${first} sections=${titles.join('|')} updated=${updated}`);
  await screenshot(page, 'loaded');

  await page.waitForFunction(([sel, before]) => {
    const td = document.querySelector(sel);
    return td && td.textContent.trim() !== before;
  }, [selector, first], { timeout: STEP_MS, polling: 100 });
  const changed = (await page.textContent(selector)).trim();
  console.log(`CHANGED ${field}=${changed}`);
  await screenshot(page, 'changed');

  await page.waitForSelector('#error:not([hidden])', { timeout: STEP_MS });
  console.log(`BANNER ${(await page.textContent('#error')).trim()}`);
  await screenshot(page, 'banner');

  if (pageErrors.length > 0) {
    throw new Error('script errors on the page: ' + pageErrors.join('; '));
  }
  await browser.close();
  process.exit(0);
} catch (e) {
  console.error(`FAIL ${e.message.split('\n')[0]}`);
  if (browser) await browser.close().catch(() => {});
  process.exit(1);
}
