// Opens the timeline page (`rewind-ls timeline --html FILE`) in headless Chromium, like a person would
// open the file in a browser, and reports what it shows: every request the page made, each column and
// cell from the DOM, the layout (sizes, what is on screen), the details of a clicked cell and turn, and
// folding and filtering at work. Saves a screenshot. Used by tests/editors/test_timeline_page.py.
// Usage: node timeline_page.mjs '<config json>'; config: { url, chromium, screenshot, width, height }.
import { chromium } from 'playwright-core';

const config = JSON.parse(process.argv[2]);

async function main() {
  const browser = await chromium.launch({
    executablePath: config.chromium,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const out = { requests: [], console: [] };
  try {
    const page = await browser.newPage({ viewport: { width: config.width || 1280, height: config.height || 800 } });
    page.on('request', (r) => out.requests.push(r.url()));
    page.on('console', (m) => out.console.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => out.console.push(`pageerror: ${e.message}`));
    const started = Date.now();
    await page.goto(config.url);
    await page.locator('body[data-ready="true"]').waitFor({ timeout: 60000 });
    out.renderMs = Date.now() - started;
    await page.screenshot({ path: config.screenshot, fullPage: false });
    Object.assign(out, await page.evaluate(() => {
      const cells = [...document.querySelectorAll('.cell[data-who]')].filter((c) => c.closest('.row'));
      const onScreen = cells.filter((c) => {
        const r = c.getBoundingClientRect();
        return r.width > 0 && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth;
      });
      const first = cells[0] ? cells[0].getBoundingClientRect() : null;
      return {
        title: document.title,
        summary: document.getElementById('summary').textContent,
        legend: [...document.querySelectorAll('#legend > span')].map((s) => s.textContent),
        columns: [...document.querySelectorAll('.turn')].map((t) => ({
          number: t.textContent, kind: [...t.classList].find((c) => c !== 'turn' && c !== 'tenth'),
        })),
        folders: [...document.querySelectorAll('.folder')].map((f) => f.dataset.folder),
        rows: document.querySelectorAll('.row').length,
        cells: cells.map((c) => ({
          path: c.closest('.row').dataset.path, turn: Number(c.dataset.turn), column: Number(c.dataset.column),
          who: c.dataset.who, change: c.dataset.change, shared: c.classList.contains('shared'),
          conflict: c.classList.contains('conflict'),
        })),
        onScreen: onScreen.length,
        firstCell: first && { width: first.width, height: first.height },
        nodes: document.getElementsByTagName('*').length,
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth,
      };
    }));
    // A click on the first cell and on the first turn's number: the details panel says what they are.
    const cell = page.locator('.row .cell').first();
    await cell.click();
    out.cellDetails = await page.locator('#details').textContent();
    await page.locator('#details').click();
    await page.locator('.turn').first().click();
    out.turnDetails = await page.locator('#details').textContent();
    await page.locator('#details').click();
    // Folding the first folder hides its rows; the filter keeps only matching files.
    const before = await page.locator('.row:not(.hidden)').count();
    await page.locator('.folder .name').first().click();
    out.folded = { before, after: await page.locator('.row:not(.hidden)').count() };
    await page.locator('.folder .name').first().click();
    if (config.filter) {
      await page.locator('#filter').fill(config.filter);
      out.filtered = await page.$$eval('.row:not(.hidden)', (rows) => rows.map((r) => r.dataset.path));
    }
    await page.locator('#zoom').fill('4');
    out.zoomedCell = await page.locator('.row .cell').first().evaluate((c) => c.getBoundingClientRect().width);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack || e));
  process.exit(1);
});
