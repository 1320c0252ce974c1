// driver.mjs - the browser half of tests/web_browser.sh: Debian's
// Chromium, headless, driven by playwright-core, clicks through the
// moderation page of a running `listgate web` as a moderator would.
//
//   node driver.mjs URL USER PASSWORD LIST ID_APPROVE ID_REJECT SHOT.png [ID_LONG]
//
// Logs in, sees both held posts on the list's page (each with its
// deciding tokens), opens each post (tokens with probabilities), saves a
// screenshot of the queue page, approves the first with the post page's
// button (opened from the queue page sorted by score: the decision goes
// back to that view), presses Enter in the second's checkbox (nothing
// is decided) and rejects it with its checkbox and the bulk button;
// with ID_LONG, Back to the page that form was sent from checks no box.
// With ID_LONG (a third held post, its Subject and From one long word
// each) it first reads the list's page and that post's page on a phone
// (a 375 pixel wide touch screen): the page is laid out for the screen
// (not for a desktop's 980 pixels, shrunk) and nothing in it is wider;
// then, its session ended in another tab, approves it from its page:
// the login page says nothing was decided, and it stays held.
// Prints TAP lines ("ok N - ..."); exits 1 when any failed.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [url, user, pw, list, idA, idR, shot, idLong] = process.argv.slice(2);
const nheld = idLong ? 3 : 2;
let n = 0, fails = 0;
function check(what, cond) {
  n++;
  if (cond) console.log(`ok ${n} - ${what}`);
  else { fails++; console.log(`not ok ${n} - ${what}`); }
}

const profile = mkdtempSync(join(tmpdir(), 'lg-chromium-'));
const args = ['--headless', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update',
  '--disable-sync'];
if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
let ctx;
try {
  ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args,
    viewport: { width: 1200, height: 800 },
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  page.setDefaultTimeout(15000);

  // the queue page wants a login first
  await page.goto(`${url}/lists/${list}`);
  check(`an anonymous visit lands on the login page (${page.url()})`,
    new URL(page.url()).pathname === '/login');
  await page.fill('input[name=user]', user);
  await page.fill('input[name=password]', pw);
  await Promise.all([page.waitForNavigation(), page.click('#login')]);
  check(`the login leads to the page asked for (${page.url()})`,
    new URL(page.url()).pathname === `/lists/${list}`);
  await page.goto(`${url}/lists`);
  const held = await page.locator(`#lists tr:has(a[href="/lists/${list}"]) td.num`).textContent();
  check(`the lists page shows ${list} with ${nheld} held`, (held || '').trim() === `${nheld}`);

  await page.goto(`${url}/lists/${list}`);
  for (const id of [idA, idR]) {
    const row = page.locator(`#post-${id}`);
    check(`post ${id} is on the queue page`, await row.count() === 1);
    const why = (await row.locator('.why').textContent()) || '';
    check(`... with its deciding tokens (${why.trim().slice(0, 60)})`, /\S+ 0\.\d{3}/.test(why));
    check(`... and a score bar`, await row.locator('svg rect').count() === 2);
  }
  check('the stats panel is there, with its chart',
    (await page.locator('#stats svg rect').count()) >= 14 * 3);
  await page.screenshot({ path: shot, fullPage: true });
  check(`a screenshot of the queue page is saved (${shot})`, true);

  for (const id of [idA, idR]) {
    await page.goto(`${url}/lists/${list}/held/${id}`);
    const rows = await page.locator('#tokens tr').count();
    const first = (await page.locator('#tokens tr').nth(1).textContent()) || '';
    check(`post ${id}'s page lists its deciding tokens with probabilities (${rows - 1})`,
      rows > 1 && /0\.\d{4}/.test(first));
    check(`... its headers`, (await page.locator('dl.hdr dt').count()) > 2);
    check(`... and a text preview`, ((await page.textContent('#preview')) || '').length > 10);
  }

  // a phone: the same session in a 375 pixel wide touch screen
  if (idLong) {
    const pprofile = mkdtempSync(join(tmpdir(), 'lg-chromium-'));
    const pctx = await chromium.launchPersistentContext(pprofile, {
      executablePath: '/usr/bin/chromium', headless: true, args,
      viewport: { width: 375, height: 700 }, isMobile: true, hasTouch: true,
      deviceScaleFactor: 2,
    });
    try {
      await pctx.addCookies(await ctx.cookies());
      const pp = pctx.pages()[0] || await pctx.newPage();
      pp.setDefaultTimeout(15000);
      for (const path of [`/lists/${list}`, `/lists/${list}/held/${idLong}`,
        `/lists/${list}/held/${idLong}?raw=1`]) {
        await pp.goto(`${url}${path}`);
        const [cw, sw] = await pp.evaluate(() =>
          [document.documentElement.clientWidth, document.documentElement.scrollWidth]);
        check(`phone: ${path} is laid out for the screen (${cw} px wide, not a desktop's)`, cw === 375);
        check(`phone: ... and nothing in it is wider than the screen (${sw} px)`, sw <= cw);
      }
      await pp.goto(`${url}/lists/${list}`);
      await pp.screenshot({ path: shot.replace(/\.png$/, '-phone.png'), fullPage: true });
    } finally {
      await pctx.close();
      rmSync(pprofile, { recursive: true, force: true });
    }
  }

  // a page size chosen: sorting keeps it
  if (idLong) {
    await page.goto(`${url}/lists/${list}?limit=1`);
    check('a page of 1 post shows 1 post', await page.locator('#held tr[id^=post-]').count() === 1);
    await Promise.all([page.waitForNavigation(), page.click('#held th a:text-is("score")')]);
    const sq = new URL(page.url()).searchParams;
    check(`... sorted by score, still 1 post a page (${page.url()})`,
      sq.get('sort') === 'score' && sq.get('limit') === '1' &&
      await page.locator('#held tr[id^=post-]').count() === 1);
  }

  // a session that ended under an open page (logged out in another
  // tab; a server restart, an idle time-out or a new password do the
  // same): a click decides nothing, and the login page says so
  if (idLong) {
    await page.goto(`${url}/lists/${list}/held/${idLong}`);
    const other = await ctx.newPage();
    await other.goto(`${url}/lists`);
    await Promise.all([other.waitForNavigation(), other.click('header button')]);
    await other.close();
    await Promise.all([page.waitForNavigation(), page.click('#approve')]);
    const said = (await page.locator('#flash').count()) ?
      (await page.textContent('#flash')) || '' : '';
    check(`approve after the session ended: the login page (${page.url()})`,
      /\/login(\?|$)/.test(page.url()));
    check(`... saying nothing was decided ("${said.trim()}")`,
      /nothing was decided/.test(said));
    await page.fill('input[name=user]', user);
    await page.fill('input[name=password]', pw);
    await Promise.all([page.waitForNavigation(), page.click('#login')]);
    await page.goto(`${url}/lists/${list}`);
    check(`... and post ${idLong} is still held`,
      await page.locator(`#post-${idLong}`).count() === 1);
    // a post's page opened after the session ended (a link kept from
    // before): the login, one failed password first, leads back to it
    const other2 = await ctx.newPage();
    await other2.goto(`${url}/lists`);
    await Promise.all([other2.waitForNavigation(), other2.click('header button')]);
    await other2.close();
    await page.goto(`${url}/lists/${list}/held/${idLong}`);
    check(`a post's page after the session ended: the login page (${page.url()})`,
      new URL(page.url()).pathname === '/login');
    await page.fill('input[name=user]', user);
    await page.fill('input[name=password]', pw + 'x');
    await Promise.all([page.waitForNavigation(), page.click('#login')]);
    await page.fill('input[name=user]', user);
    await page.fill('input[name=password]', pw);
    await Promise.all([page.waitForNavigation(), page.click('#login')]);
    check(`... the login leads back to that post's page (${page.url()})`,
      new URL(page.url()).pathname === `/lists/${list}/held/${idLong}`);
  }

  // approve the first with its page's button, opened from the queue
  // page sorted by score
  await page.goto(`${url}/lists/${list}?sort=score&dir=desc&limit=20`);
  await Promise.all([page.waitForNavigation(), page.click(`#post-${idA} a`)]);
  check(`post ${idA}'s page opened from the queue page`,
    page.url().includes(`/lists/${list}/held/${idA}`));
  await Promise.all([page.waitForNavigation(), page.click('#approve')]);
  const flash1 = (await page.textContent('#flash')) || '';
  check(`approve: back on the queue page saying "${flash1.trim()}"`,
    page.url().includes(`/lists/${list}`) && flash1.includes(`post ${idA} approved`));
  const back = new URL(page.url()).searchParams;
  check(`... in the view it was opened from (sorted by score, highest first, 20 a page: ${page.url()})`,
    back.get('sort') === 'score' && back.get('dir') === 'desc' && back.get('limit') === '20');
  check(`... post ${idA} has left the queue`, await page.locator(`#post-${idA}`).count() === 0);

  // a keyboard: Space checks the second post's box; Enter there submits
  // the form with its first button, which must not be approve
  await page.focus(`#post-${idR} input[type=checkbox]`);
  await page.keyboard.press('Space');
  check(`keyboard: Space checks post ${idR}'s box`,
    await page.isChecked(`#post-${idR} input[type=checkbox]`));
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  const flashK = (await page.locator('#flash').count()) ?
    (await page.textContent('#flash')) || '' : '';
  check(`... Enter in it decides nothing ("${flashK.trim()}")`,
    /nothing was decided/.test(flashK));
  check(`... post ${idR} is still on the queue page`,
    await page.locator(`#post-${idR}`).count() === 1);

  // reject the second: its checkbox, then the bulk button (in a view
  // where it is the first row, for the Back below)
  let view = `${url}/lists/${list}?sort=score&dir=desc&limit=20`;
  await page.goto(view);
  if (await page.locator('#held tr[id^=post-]').first().getAttribute('id') !==
      `post-${idR}`) {
    view = `${url}/lists/${list}?sort=score&dir=asc&limit=20`;
    await page.goto(view);
  }
  await page.check(`#post-${idR} input[type=checkbox]`);
  await Promise.all([page.waitForNavigation(),
    page.click('#bulk button[value=reject]')]);
  const flash2 = (await page.textContent('#flash')) || '';
  check(`reject (bulk): "${flash2.trim()}"`, flash2.includes('1 post rejected'));
  check(`... post ${idR} has left the queue`, await page.locator(`#post-${idR}`).count() === 0);
  await page.screenshot({ path: shot.replace(/\.png$/, '-after.png'), fullPage: true });
  // Back to the page the form was sent from: the browser loads it anew
  // (no-store), and must not check again, in order, the boxes that were
  // checked there: the first row is now another post, never checked
  if (idLong) {
    await page.goBack();
    await page.waitForLoadState('load');
    const checked = await page.$$eval('#held input[type=checkbox]',
      els => els.filter(e => e.checked).map(e => e.value));
    check(`Back after the bulk form: no post checked that was not (${checked.join(',') || 'none'})`,
      checked.length === 0 && (await page.locator(`#post-${idLong}`).count()) === 1);
  }
} catch (e) {
  check(`the browser run went through (${e.message.split('\n')[0]})`, false);
} finally {
  if (ctx) await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(`1..${n}`);
process.exit(fails ? 1 : 0);
