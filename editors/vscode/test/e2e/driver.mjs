// Drives a real VS Code (code-server in headless Chromium, via playwright-core) the way a person would:
// keyboard, command palette, quick picks. Used by tests/editors/test_vscode_e2e.py, which sets up the
// workspace, the recorded agent turns and code-server, and checks what this script observed.
//
//   node driver.mjs config.json
//
// config: { url, workspace, artifacts, chromium, logs, steps: [...] }; it writes { observations, error? } as JSON
// to config.result. Each step is one person-level action; "observe" records the editor's view of files
// (text of the editor, dirty flag of the tab) together with the bytes on disk at the same moment.
import { chromium } from 'playwright-core';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const TIMEOUT = config.timeoutMs ?? 30000;
const log = (...a) => console.error(`[driver ${new Date().toISOString().slice(11, 23)}]`, ...a);
const observations = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, timeout = TIMEOUT, interval = 200) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(interval);
  }
  throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

/** Every output-channel log of the Rewind extension under config.logs (the profile's log folder). */
function extensionLog() {
  const found = [];
  const walk = (dir) => {
    for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/Rewind.*\.log$/.test(e.name)) found.push(fs.readFileSync(p, 'utf8'));
    }
  };
  walk(config.logs ?? '');
  return found.join('\n');
}

const readDisk = (rel) => {
  const p = path.join(config.workspace, rel);
  return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : null;
};

/** The tab of a file: its DOM element (VS Code marks tabs of unsaved files with the class "dirty"). */
function tab(page, rel) {
  return page.locator(`.tabs-container .tab[data-resource-name="${path.basename(rel)}"]`).first();
}

/** The text of the active editor, line by line in visual order (non-breaking spaces back to spaces). */
async function activeEditorText(page) {
  return page.evaluate(() => {
    const group = document.querySelector('.editor-group-container.active') ?? document;
    // In a diff editor the file's own document is the right (modified) side.
    const root = group.querySelector('.editor-instance .monaco-diff-editor .editor.modified .view-lines')
      ?? group.querySelector('.editor-instance .monaco-editor .view-lines');
    const lines = [...(root?.querySelectorAll('.view-line') ?? [])];
    lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
    return lines.map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n');
  });
}

async function quickInputVisible(page) {
  return page.locator('.quick-input-widget').isVisible();
}

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: TIMEOUT });
  await input.fill('>' + title);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
  await row.waitFor({ state: 'visible', timeout: TIMEOUT });
  await until(`"${title}" to be the focused row`, async () =>
    (await page.locator('.quick-input-widget .monaco-list-row.focused').first().textContent())?.includes(title),
  );
  await page.keyboard.press('Enter');
}

/** Waits for a quick pick whose rows include `rowText`, then returns the row texts. */
async function waitForPick(page, rowText) {
  await until(`a quick pick with "${rowText}"`, async () => {
    if (!(await quickInputVisible(page))) return false;
    return page.locator('.quick-input-widget .monaco-list-row', { hasText: rowText }).first().isVisible();
  });
  return page.locator('.quick-input-widget .monaco-list-row').allTextContents();
}

// `seek`: move the focus down (as a person does with the arrow keys) until the row is focused, for a
// row that is not the first one.
async function pick(page, filter, rowText, seek = false) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.fill(filter);
  await until(`"${rowText}" to be the focused row`, async () => {
    const focused = await page.locator('.quick-input-widget .monaco-list-row.focused').first().textContent();
    if (focused?.includes(rowText)) return true;
    if (seek && focused) await page.keyboard.press('ArrowDown');
    return false;
  });
  await page.keyboard.press('Enter');
}

async function openFile(page, rel) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: TIMEOUT });
  await input.fill(rel);
  await until(`quick open to offer ${rel}`, async () =>
    (await page.locator('.quick-input-widget .monaco-list-row.focused').first().textContent())?.includes(path.basename(rel)),
  );
  await page.keyboard.press('Enter');
  await tab(page, rel).waitFor({ state: 'visible', timeout: TIMEOUT });
  await until(`${rel} to be the active tab`, async () => (await tab(page, rel).getAttribute('class'))?.includes('active'));
}

async function focusFile(page, rel) {
  await tab(page, rel).click();
  await until(`${rel} to be the active tab`, async () => (await tab(page, rel).getAttribute('class'))?.includes('active'));
  await page.locator('.editor-group-container.active .editor-instance .monaco-editor .view-lines').first().waitFor();
  await sleep(200);
}

async function observe(page, label, files) {
  const obs = { label, files: {} };
  for (const rel of files) {
    const t = tab(page, rel);
    const open = (await page.locator(`.tabs-container .tab[data-resource-name="${path.basename(rel)}"]`).count()) > 0;
    const entry = { open, disk: readDisk(rel) };
    if (open) {
      await focusFile(page, rel);
      entry.editor = await activeEditorText(page);
      entry.dirty = ((await t.getAttribute('class')) ?? '').split(/\s+/).includes('dirty');
    }
    obs.files[rel] = entry;
  }
  obs.notifications = await page.locator('.notifications-toasts .notification-list-item-message').allTextContents();
  log('observed', JSON.stringify(obs));
  observations.push(obs);
  return obs;
}

/** A modal dialog, if one is open: its text; the test decides what to press. */
async function dialogText(page) {
  const box = page.locator('.monaco-dialog-box');
  return (await box.isVisible()) ? (await box.textContent()) : null;
}

async function main() {
  const browser = await chromium.launch({
    executablePath: config.chromium,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  try {
    for (const step of config.steps) {
      log('step', JSON.stringify(step));
      switch (step.do) {
        case 'open-workbench': {
          // `workspaceFile`: a multi-root workspace (a .code-workspace file) instead of the folder.
          const what = step.workspaceFile ? `workspace=${encodeURIComponent(step.workspaceFile)}` : `folder=${encodeURIComponent(config.workspace)}`;
          await page.goto(`${config.url}/?${what}`);
          await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60000 });
          break;
        }
        case 'wait-status': {
          // The extension's status bar item: the server runs and has answered rewind/listTurns.
          await page.locator('.statusbar-item', { hasText: step.text }).first().waitFor({ state: 'visible', timeout: 60000 });
          break;
        }
        case 'open': {
          await openFile(page, step.file);
          break;
        }
        case 'type': {
          await focusFile(page, step.file);
          await page.keyboard.press('Control+Home');
          await page.keyboard.type(step.text);
          await until(`${step.file} to be dirty`, async () => (await tab(page, step.file).getAttribute('class'))?.includes('dirty'));
          break;
        }
        case 'command': {
          await runCommand(page, step.title);
          break;
        }
        case 'pick': {
          const rows = await waitForPick(page, step.row);
          observations.push({ label: `picker:${step.row}`, rows });
          if (step.screenshot) {
            await sleep(300); // let the list settle (detail lines, highlights)
            await page.screenshot({ path: path.join(config.artifacts, step.screenshot) });
          }
          await pick(page, step.filter ?? step.row, step.row, !!step.seek);
          break;
        }
        case 'dismiss-conflicts': {
          // A conflict modal is not expected; if one shows, record it and cancel (the test then fails).
          await sleep(step.ms ?? 1000);
          const text = await dialogText(page);
          if (text) {
            observations.push({ label: 'conflict-dialog', text });
            await page.keyboard.press('Escape');
          }
          break;
        }
        case 'wait-disk': {
          await until(`${step.file} on disk to be ${JSON.stringify(step.content)}`, async () => readDisk(step.file) === step.content);
          break;
        }
        case 'wait-editor': {
          await until(`the editor of ${step.file} to show ${JSON.stringify(step.text)}`, async () => {
            await focusFile(page, step.file);
            return (await activeEditorText(page)).trim() === step.text.trim();
          });
          break;
        }
        case 'wait-clean': {
          await until(`${step.file} to be saved`, async () => !(await tab(page, step.file).getAttribute('class'))?.split(/\s+/).includes('dirty'));
          break;
        }
        case 'observe': {
          await observe(page, step.label, step.files);
          break;
        }
        case 'dialog': {
          // A modal dialog (e.g. the conflict choice): record its text, optionally a screenshot, press a button.
          const box = page.locator('.monaco-dialog-box');
          await box.waitFor({ state: 'visible', timeout: TIMEOUT });
          await sleep(300);
          observations.push({ label: step.label ?? 'dialog', text: await box.textContent(),
            buttons: await box.locator('.monaco-button').allTextContents() });
          if (step.screenshot) await page.screenshot({ path: path.join(config.artifacts, step.screenshot) });
          await box.locator('.monaco-button', { hasText: step.button }).first().click();
          await box.waitFor({ state: 'hidden', timeout: TIMEOUT });
          break;
        }
        case 'wait-for': {
          const loc = page.locator(step.selector, step.text ? { hasText: step.text } : undefined).first();
          await loc.waitFor({ state: 'visible', timeout: TIMEOUT });
          break;
        }
        case 'click': {
          await page.locator(step.selector, step.text ? { hasText: step.text } : undefined).nth(step.nth ?? 0).click();
          break;
        }
        case 'exec': {
          // A process outside the editor (an agent turn through the hook, an edit of the settings file).
          const r = spawnSync(step.argv[0], step.argv.slice(1), { encoding: 'utf8', timeout: 60000 });
          observations.push({ label: step.label ?? 'exec', status: r.status, stdout: r.stdout, stderr: r.stderr });
          if (r.status !== 0) throw new Error(`${step.argv.join(' ')} exited ${r.status}: ${r.stderr}`);
          break;
        }
        case 'edit-user-settings': {
          // As a person would: "Preferences: Open User Settings (JSON)", replace the text, save.
          await runCommand(page, 'Preferences: Open User Settings (JSON)');
          await until('settings.json to be the active tab', async () =>
            (await tab(page, 'settings.json').getAttribute('class'))?.includes('active'));
          await page.locator('.editor-group-container.active .editor-instance .monaco-editor .view-lines').first().click();
          await page.keyboard.press('Control+A');
          await page.keyboard.insertText(JSON.stringify(step.settings)); // one line: no auto-indent
          await page.keyboard.press('Control+S');
          await until('settings.json to be saved', async () =>
            !(await tab(page, 'settings.json').getAttribute('class'))?.split(/\s+/).includes('dirty'));
          break;
        }
        case 'wait-value': {
          // Until an input field's value (or an attribute) matching the selector equals `value` or
          // contains `contains`, then record the values seen (with a label): a view that re-renders
          // (a settings search, "Show Enabled Extensions") may show a row and swap it right after.
          const read = () => page.locator(step.selector).evaluateAll(
            (els, attr) => els.map((e) => (attr ? e.getAttribute(attr) : e.value)), step.attr ?? null);
          const values = await until(`${step.selector} to hold ${JSON.stringify(step.value ?? step.contains)}`, async () => {
            const now = await read();
            const hit = now.some((v) => v !== null && (step.value !== undefined ? v === step.value : v.includes(step.contains)));
            return hit ? now : null;
          });
          if (step.label) observations.push({ label: step.label, values });
          break;
        }
        case 'observe-values': {
          // The values of input fields (a setting's text box), or of an attribute (an image's src).
          const values = await page.locator(step.selector).evaluateAll(
            (els, attr) => els.map((e) => (attr ? e.getAttribute(attr) : e.value)), step.attr ?? null);
          observations.push({ label: step.label, values });
          break;
        }
        case 'type-text': {
          // Into whatever has the focus (a search box).
          await page.keyboard.type(step.text);
          break;
        }
        case 'press': {
          await page.keyboard.press(step.key);
          break;
        }
        case 'observe-texts': {
          // Texts of every element matching a selector (code lenses, notifications, ...); with visible: true
          // only the ones on screen (a hidden toast stays in the DOM).
          await sleep(step.settleMs ?? 0);
          const loc = page.locator(step.selector);
          let texts = await loc.allTextContents();
          if (step.visible) {
            const shown = [];
            for (let i = 0; i < texts.length; i++) if (await loc.nth(i).isVisible()) shown.push(texts[i]);
            texts = shown;
          }
          observations.push({ label: step.label, texts });
          break;
        }
        case 'focus': {
          await focusFile(page, step.file);
          break;
        }
        case 'row-action': {
          // An inline action of a tree row (shown on hover), e.g. in the Rewind view.
          const row = page.locator(`${step.tree ?? '.pane-body'} .monaco-list-row`, { hasText: step.row }).first();
          await row.hover();
          await row.locator(`.action-label[aria-label="${step.action}"]`).click();
          break;
        }
        case 'observe-diff': {
          // Both sides of the visible diff editor, line by line.
          await page.locator('.monaco-diff-editor .editor.modified .view-lines').first().waitFor({ state: 'visible' });
          await sleep(500);
          const side = (which) => page.evaluate((w) => {
            const root = document.querySelector(`.monaco-diff-editor .editor.${w} .view-lines`);
            const lines = [...(root?.querySelectorAll('.view-line') ?? [])];
            lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
            return lines.map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n');
          }, which);
          const title = await page.locator('.tabs-container .tab.active').first().textContent();
          observations.push({ label: step.label, original: await side('original'), modified: await side('modified'), title });
          if (step.screenshot) await page.screenshot({ path: path.join(config.artifacts, step.screenshot) });
          break;
        }
        case 'screenshot': {
          await page.screenshot({ path: path.join(config.artifacts, step.name) });
          break;
        }
        case 'sleep': {
          await sleep(step.ms);
          break;
        }
        case 'wait-log': {
          // The extension's Output › Rewind, as VS Code writes it to the profile's log folder: `count` lines
          // (default 1) containing `text`.
          await until(`Output › Rewind to show ${JSON.stringify(step.text)} ${step.count ?? 1} time(s)`, async () =>
            extensionLog().split('\n').filter((l) => l.includes(step.text)).length >= (step.count ?? 1));
          break;
        }
        case 'observe-webview': {
          // Elements inside the active webview (two iframes deep): each one's text and data-* attributes, once
          // `selector` shows (the timeline picture's cells).
          const frame = page.frameLocator('iframe.webview.ready').first().frameLocator('#active-frame');
          await frame.locator(step.selector).first().waitFor({ state: 'attached', timeout: TIMEOUT });
          const items = await frame.locator(step.selector).evaluateAll((els) =>
            els.map((e) => ({ text: e.textContent, data: { ...e.dataset }, classes: e.className })));
          observations.push({ label: step.label, items });
          break;
        }
        case 'click-webview': {
          const frame = page.frameLocator('iframe.webview.ready').first().frameLocator('#active-frame');
          await frame.locator(step.selector).nth(step.nth ?? 0).click();
          break;
        }
        default:
          throw new Error(`unknown step ${step.do}`);
      }
    }
    fs.writeFileSync(config.result, JSON.stringify({ observations }, null, 2));
  } catch (e) {
    log('FAILED', e);
    try {
      await page.screenshot({ path: path.join(config.artifacts, 'vscode-failure.png') });
    } catch {
      /* the page may be gone */
    }
    fs.writeFileSync(config.result, JSON.stringify({ observations, error: String(e?.stack ?? e) }, null, 2));
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
}

await main();
