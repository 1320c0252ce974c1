// html_hidden.mjs - the browser half of tests/html_hidden_diff.sh:
// Chromium (headless, through playwright-core) judges which text of an
// HTML snippet a reader is shown, html_to_text() (tests/htmlsplit) says
// which text it calls hidden, and the two are compared.
//
//   node html_hidden.mjs HTMLSPLIT N SEED
//
// The snippets: the hand-written attacks below and N random ones from a
// small grammar of nested tags, styles, attributes and sheets.  Every
// text node holds one marker word ("q" + 3 letters + "z" + 2 letters).
// Chromium's verdict for a text node: not shown when it has no layout
// box, its element's computed visibility is not "visible", the product
// of its ancestors' opacity is 0 or its computed font size is below
// 1px.  A marker the browser shows and html_to_text() puts in its hidden
// text is an evasion: printed with its snippet ("not ok"), exit 1.  The
// other direction (hidden or dropped by the browser, shown by listgate:
// the old behaviour) is only counted.  Prints TAP lines.
import { chromium } from 'playwright-core';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [split, nrand = '300', seedArg = '1'] = process.argv.slice(2);
let seed = Number(seedArg) >>> 0 || 1;
function rnd() {			// xorshift32: the same snippets for a seed
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
}
const pick = (a) => a[Math.floor(rnd() * a.length)];
const L = 'abcdefghijklmnopqrstuvwxyz';
const b26 = (v, w) => { let s = ''; for (let i = 0; i < w; i++) { s = L[v % 26] + s; v = Math.floor(v / 26); } return s; };

// --- the snippets: "@" stands for a fresh marker ---------------------------
const hand = [
  // implied ends: the hidden element is closed before the shown text
  '<b><span style="display:none">@</b>@',
  '<p><span style="display:none">@<div>@</div>',
  '<p style="display:none">@<div>@</div>',
  '<p hidden>@<p>@',
  '<li hidden>@<li>@',
  '<ul><li><span hidden>@<li>@</ul>',
  '<dl><dt hidden>@<dd>@</dl>',
  '<table><tr style="display:none"><td>@<tr><td>@</table>',
  '<table><tr><td><span style="display:none">@<td>@</table>',
  '<table><span style="display:none">@<tr><td>@</table>',
  '<a href="http://x/"><span hidden>@<a href="http://y/">@</a>',
  '<select><option style="display:none">@<option>@</select>',
  '<h1 hidden>@<h2>@</h2>',
  '<div><span style="visibility:hidden">@</div>@',
  '<i><font style="font-size:0">@</i>@ @ @</font>',
  // the hidden attribute is HTML's: not an SVG's or MathML's
  '<svg hidden><text y="20">@</text></svg>',
  '<svg><text y="20" hidden>@</text></svg>',
  '<math hidden><mi>@</mi></math>',
  // declarations a browser drops
  '<span style="display: no ne">@</span>',
  '<span style="dis play:none">@</span>',
  '<span style="font-size:0 px">@</span>',
  '<span style="font-size:0foo">@</span>',
  '<span style="font-size:12px;font-size:0q">@</span>',
  '<span style="display:none !importantx">@</span>',
  '<span style="display:none !">@</span>',
  '<span style=\'font-family:"x;display:none"\'>@</span>',
  '<span style="background:url(x;display:none)">@</span>',
  '<span style="opacity:0 0">@</span>',
  '<span style="visibility:hid/**/den">@</span>',
  // what a descendant sets again
  '<style>b{font-size:14px}</style><span style="font-size:0">@<b>@</b></span>',
  '<style>.v{visibility:visible}</style><span style="visibility:hidden">@<b class=v>@</b></span>',
  '<span style="font-size:0">@<font size="3">@</font></span>',
  '<span style="font-size:0">@<b style="font:12px serif">@</b></span>',
  '<span style="font-size:0">@<button>@</button></span>',
  '<span style="font-size:0">@<select><option>@</select></span>',
  // character references and CSS escapes a browser decodes: in what a
  // descendant or a sheet sets again, and in the element's own style
  '<div style="font-size:0">@<span style="f&#111;nt-size:16px">@</span></div>',
  '<div style="font-size:0">@<span style="f\\6f nt-size:16px">@</span></div>',
  '<div style="font-size:0">@<span style="fo&#x6E;t:16px serif">@</span></div>',
  '<div style="visibility:hidden">@<span style="visib\\69 lity:visible">@</span></div>',
  '<div style="visibility:hidden">@<span style="v&#105;sibility:visible">@</span></div>',
  '<style>.x{displ\\61y:inline!important}</style><span class=x style="display:none">@</span>',
  '<style>.x{display:inline!imp\\6frtant}</style><span class=x style="display:none">@</span>',
  '<style>.x{opacity:1!\\69mportant}</style><span class=x style="opacity:0">@</span>',
  '<style>.x{f\\6fnt-size:14px}</style><span style="font-size:0">@<b class=x>@</b></span>',
  '<style>section{disp\\6cay:block}</style><section hidden>@</section>',
  '<span style="display&#58;none">@</span>@',
  '<span style="display:n&#111;ne">@</span>@',
  '<span style="display&colon;none">@</span>@',
  '<span style="font-size&#x3a;0">@</span>@',
  '<span style="d\\69splay:none">@</span>@',
  '<span style="display:n\\6f ne">@</span>@',
  '<span style="display:\\6e\\6f\\6e\\65">@</span>@',
  '<span style="display:/**/none">@</span>@',
  '<span style="display/**/:none">@</span>@',
  '<span style="font-size:0/**/px">@</span>@',
  '<span style="dis/**/play:none">@</span>@',
  '<span style="display:none\\3b">@</span>@',
  '<span style="display\\3a none">@</span>@',
  '<span style="di\\splay:none">@</span>@',
  '<span style="display:no\\ne">@</span>@',
  '<span style="display:&#110;one;color:red">@</span>@',
  '<span style="visibility:h&#x69;dden">@</span>@',
  '<span style="opacity:&#48;">@</span>@',
  '<span style="display:none&#59;display:inline">@</span>@',
  '<span style="display:none&#x3B;color:red">@</span>@',
  '<span style="display:/*x*/none/*y*/">@</span>@',
  '<span style="display:none/*">@</span>@',
  '<span style="/*display:inline;*/display:none">@</span>@',
  '<span style="display:none;/*;display:inline*/">@</span>@',
  '<span style="font-size:0;/*">@</span>@',
  '<span style="display:\\none">@</span>@',
  '<span style="display:none\\">@</span>@',
  '<span style="display:none;display&#58;inline">@</span>@',
  '<span style="display:none;display&#x3A;inline">@</span>@',
  '<span style="font-family:&quot;/*&quot;;display:none;x:&quot;*/&quot;">@</span>@',
  '<span style="display:none;font-family:&quot;/*&quot;;display:inline;x:&quot;*/&quot;">@</span>@',
  '<span style="display:none;font-family:&quot;a&#10;;display:inline">@</span>@',
  '<span style="display:none;font-family:&quot;a\\&#10;;display:inline&quot;">@</span>@',
  '<span style="display:&#8203;none">@</span>@',
  '<span style="display:&nbsp;none">@</span>@',
  '<span style="display:&#92;6e one">@</span>@',
  '<span style="display:none;display:&#92;69nline">@</span>@',
  '<span hidden style="disp&#108;ay:block">@</span>@',
  '<span hidden style="display:bl\\6f ck">@</span>@',
  '<div style="font-size:0">@<a href="?a=1&amp;b=2">@</a></div>@',
  // a <table> in a table closes it, and what was moved out in front
  '<table hidden><dd hidden><table></table>@</table>@',
  '<table><dd hidden>@<table></table>@</table>@',
  '<table><tr><td><dd hidden>@<table><tr><td>@</table>@</dd>@</table>',
  '<table><tr><td>@</td></tr><dd hidden>@<div><table></table>@</div></table>@',
  // formatting elements a browser reopens (its list of active ones)
  '<div style="display:none"><u><a>@</u></div><span hidden><a>@',
  '<center><strong style="font-size:14px"></center><pre style="font-size:0.5pt">@</pre>',
  '<CENTER><STRONG style="font-size:14px"></a></CENTER><pre style="font-size:0.5pt">@</pre>',
  '<dd hidden><a style="display:none"></dd><span hidden><a>@',
  '<dt><font style="visibility:visible"><font class=c></font><dd style="visibility:collapse">@</dd>',
  // and what stays hidden
  '<div style="display:none">@<p>@<div>@</div>@</div>@',
  '<span style="display:none">@<b>@</b>@</span>@',
  '<div hidden><ul><li>@<li>@</ul>@</div>@',
  '<div style="opacity:0"><table><tr><td>@<td>@</table></div>@',
  'Mi<span style="font-size:0">x</span>crosoft @',
];

const inl = ['span', 'b', 'i', 'font', 'em', 'strong', 'u', 'small', 'big', 'a', 'label', 'code'];
const blk = ['div', 'p', 'section', 'center', 'blockquote', 'h1', 'pre', 'li', 'dt', 'dd', 'ul', 'td', 'tr', 'option'];
const decls = ['display:none', 'display:none !important', 'DISPLAY : NONE', 'display:inline',
  'display:block', 'display:contents', 'visibility:hidden', 'visibility:visible', 'visibility:collapse',
  'opacity:0', 'opacity:0.0', 'opacity:0%', 'opacity:.5', 'opacity:1', 'font-size:0', 'font-size:0px',
  'font-size:0pt', 'font-size:.5px', 'font-size:0.5pt', 'font-size:14px', 'font-size:1em', 'font-size:0em',
  'color:red', 'display:/**/none', 'display&#58;none', 'display:none;display:inline', 'font-size:0 !important',
  'display: no ne', 'font-size:0foo', 'font-size: 0 px', 'display:none !importantx', 'font:12px serif',
  'font-family:"a;display:none"', 'display:none!IMPORTANT', 'max-height:0;overflow:hidden'];
const sheets = ['span{font-size:14px}', '.c{visibility:visible}', 'b{display:inline!important}',
  'p{color:red}', '.c{font-size:12px}', 'i{opacity:1}', 'section{display:block}', '*{font-size:inherit}'];

function style() {
  const n = 1 + Math.floor(rnd() * 2);
  const d = [];
  for (let i = 0; i < n; i++) d.push(pick(decls));
  const q = pick(['"', '"', "'"]);
  return ` style=${q}${d.join(';').replaceAll(q, q === '"' ? "'" : '"')}${q}`;
}
function attrs() {
  let a = '';
  if (rnd() < 0.45) a += style();
  if (rnd() < 0.12) a += ' hidden';
  if (rnd() < 0.15) a += ' class=c';
  if (rnd() < 0.05) a += style();	// a repeated style
  return a;
}
function elem(depth) {
  const r = rnd();
  if (r < 0.04) return `<svg${attrs()}><text y="20"${attrs()}>@</text></svg>`;
  if (r < 0.06) return `<math${attrs()}><mi${attrs()}>@</mi></math>`;
  if (r < 0.08) return `<template>${seq(depth + 1)}</template>`;
  if (r < 0.10) return `<select${attrs()}><option${attrs()}>@<option${attrs()}>@</select>`;
  if (r < 0.13) return `<table${attrs()}>${rnd() < 0.5 ? seq(depth + 1) : ''}<tr${attrs()}><td${attrs()}>${seq(depth + 1)}${rnd() < 0.5 ? '<td>' + seq(depth + 1) : ''}</table>`;
  if (r < 0.15) return `<noscript>@</noscript>`;
  const name = rnd() < 0.6 ? pick(inl) : pick(blk);
  const tn = rnd() < 0.1 ? name.toUpperCase() : name;
  let s = `<${tn}${attrs()}>` + (depth < 4 ? seq(depth + 1) : '@');
  const e = rnd();
  if (e < 0.75) s += `</${tn}>`;
  else if (e < 0.85) s += `</${pick(inl.concat(blk))}>`;
  return s;			// else: left open
}
function seq(depth) {
  let s = '';
  const n = 1 + Math.floor(rnd() * 3);
  for (let i = 0; i < n; i++) s += rnd() < 0.4 ? ' @ ' : elem(depth);
  return s;
}
function random() {
  let s = '';
  if (rnd() < 0.2) s += `<style>${pick(sheets)}</style>`;
  return s + seq(0) + ' @';
}

const raw = hand.concat(Array.from({ length: Number(nrand) }, random));
const snippets = raw.map((s, i) => {
  let k = 0;
  return s.replace(/@/g, () => ` q${b26(i, 3)}z${b26(k++, 2)} `);
});
const MARK = /q[a-z]{3}z[a-z]{2}/g;

// --- listgate's split ---------------------------------------------------------
const res = spawnSync(split, [], { input: snippets.join('\0') + '\0', maxBuffer: 1 << 28 });
if (res.status !== 0) { console.log(`Bail out! ${split} failed`); process.exit(99); }
const lines = res.stdout.toString().split('\n').filter((l) => l.startsWith('S\t'));
if (lines.length !== snippets.length) { console.log('Bail out! htmlsplit lines'); process.exit(99); }
const lg = lines.map((l) => {
  const [, shown, hid] = l.split('\t');
  const m = new Map();
  for (const w of hid.match(MARK) || []) m.set(w, 'H');
  for (const w of shown.match(MARK) || []) m.set(w, 'S');
  return m;
});

// --- the browser's ---------------------------------------------------------
const profile = mkdtempSync(join(tmpdir(), 'lg-chromium-'));
const args = ['--headless', '--disable-gpu', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
let ctx, br = [];
try {
  ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args, viewport: { width: 800, height: 600 },
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  await page.setContent('<!DOCTYPE html><body></body>');
  for (let b = 0; b < snippets.length; b += 50) {
    const part = await page.evaluate(async (snips) => {
      const frames = snips.map((s) => {
        const f = document.createElement('iframe');
        f.setAttribute('sandbox', 'allow-same-origin');	// no scripts, as in a mail reader
        f.srcdoc = s;
        return f;
      });
      await Promise.all(frames.map((f) => new Promise((ok) => { f.onload = ok; document.body.appendChild(f); })));
      const out = frames.map((f) => {
        const doc = f.contentDocument, win = f.contentWindow, m = {};
        const w = doc.createTreeWalker(doc.documentElement, NodeFilter.SHOW_TEXT);
        for (let t = w.nextNode(); t; t = w.nextNode()) {
          const words = t.data.match(/q[a-z]{3}z[a-z]{2}/g);
          if (!words) continue;
          const el = t.parentElement;
          let shown = !!el;
          if (shown) {
            const r = doc.createRange();
            r.selectNodeContents(t);
            const cs = win.getComputedStyle(el);
            shown = r.getClientRects().length > 0 && cs.visibility === 'visible' &&
              parseFloat(cs.fontSize) >= 1;
            for (let e = el; shown && e; e = e.parentElement)
              if (parseFloat(win.getComputedStyle(e).opacity) === 0) shown = false;
          }
          for (const x of words) if (m[x] !== 'S') m[x] = shown ? 'S' : 'H';
        }
        f.remove();
        return m;
      });
      return out;
    }, snippets.slice(b, b + 50));
    br = br.concat(part);
  }
} finally {
  if (ctx) await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}

// --- compared ----------------------------------------------------------------
let n = 0, evasions = 0, markers = 0;
const other = {};
snippets.forEach((s, i) => {
  const bad = [];
  for (const x of s.match(MARK)) {
    markers++;
    const B = br[i][x] || 'A', G = lg[i].get(x) || 'A';
    if (B === 'S' && G === 'H') bad.push(x);
    else if (B !== G) other[`browser ${B} listgate ${G}`] = (other[`browser ${B} listgate ${G}`] || 0) + 1;
  }
  if (bad.length) {
    evasions++;
    console.log(`not ok ${++n} - shown by the browser, hidden by listgate: ${bad.join(' ')}`);
    console.log(`# ${s.replace(/\n/g, ' ')}`);
  }
});
console.log(`ok ${++n} - ${snippets.length} snippets, ${markers} markers compared`);
for (const [k, v] of Object.entries(other).sort())
  console.log(`# ${k} (S shown, H hidden, A absent): ${v} markers`);
console.log(`1..${n}`);
process.exit(evasions ? 1 : 0);
