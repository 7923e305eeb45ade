'use strict';
// git rutter timeline: builds the page from the JSON in #data. Every text the record holds is
// set with textContent, never parsed as markup, and each field is in a bidi isolate of its own
// (a <bdi>, or a block), so no field's text, right-to-left or not, reorders the next one; the
// controls themselves arrive escaped as \u{XXXX} (spec/timeline.md).
(() => {
  const data = JSON.parse(document.getElementById('data').textContent);
  const decisions = data.decisions;
  const NONE = '\u0000';

  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  // One field of the record, isolated.
  const field = (cls, text) => el('bdi', cls, text);

  const scope = document.getElementById('scope');
  scope.append('Vault ', field(null, data.vault), ' \u00b7 written ', field(null, data.written));
  const notes = document.getElementById('notes');
  for (const n of data.notes) notes.append(el('p', 'note', n));

  // Decisions come sorted: day (newest first), project, time. One section per day, one per
  // project inside it.
  const rows = [];
  const projects = [];
  const days = [];
  const frag = document.createDocumentFragment();
  let day = null;
  let project = null;
  let list = null;
  for (const d of decisions) {
    const p = d.project === undefined ? NONE : d.project;
    if (day === null || d.day !== day.name) {
      const section = el('section', 'day');
      section.append(el('h2', null, d.day));
      frag.append(section);
      day = { name: d.day, section: section, projects: [] };
      days.push(day);
      project = null;
    }
    if (project === null || p !== project.name) {
      const section = el('section', 'project');
      section.append(el('h3', p === NONE ? 'none' : null, p === NONE ? 'no project' : p));
      list = el('ol', 'decisions');
      section.append(list);
      day.section.append(section);
      project = { name: p, section: section, shown: 0 };
      day.projects.push(project);
      projects.push(project);
    }
    const li = el('li', 'decision');
    li.append(field('time', d.time));
    li.append(field('id', d.id));
    if (d.client !== undefined) li.append(field('client', d.client));
    li.append(field('summary', d.summary));
    if (d.mark !== undefined) li.append(field('mark', d.mark));
    if (d.superseded !== undefined) li.append(field('mark', d.superseded));
    const hay = [d.summary];
    if (d.project !== undefined) hay.push(d.project);
    if (d.refs !== undefined) {
      const refs = el('ul', 'refs');
      for (const r of d.refs) {
        const item = el('li');
        const code = el('code');
        code.append(field('path', r.path), '@', field('hash', r.hash));
        item.append(code);
        if (r.drift !== undefined) item.append(field('drift', r.drift));
        refs.append(item);
        hay.push(r.path);
      }
      if (d.more_refs !== undefined) {
        refs.append(el('li', 'more', 'and ' + d.more_refs + ' more cited notes, not shown'));
      }
      li.append(refs);
    }
    list.append(li);
    rows.push({
      li: li,
      project: project,
      p: p,
      c: d.client === undefined ? NONE : d.client,
      // What --grep searches, one field a line, so no word matches across two of them.
      hay: hay.join('\n').toLowerCase(),
      shown: true,
    });
  }
  const main = document.getElementById('timeline');
  main.append(frag);
  if (data.empty !== null) main.append(el('p', 'empty', data.empty));
  if (data.hint !== null) main.append(el('p', 'hint', data.hint));

  // The lists of the filter: every project and client the decisions name, by name.
  const fill = (select, values, noneLabel) => {
    const names = [...new Set(values)].sort((a, b) => a.localeCompare(b));
    for (const v of names) {
      const o = el('option', v === NONE ? 'none' : null, v === NONE ? noneLabel : v);
      o.value = v;
      select.append(o);
    }
  };
  const text = document.getElementById('text');
  const projectSelect = document.getElementById('project');
  const clientSelect = document.getElementById('client');
  fill(projectSelect, rows.map((r) => r.p), 'no project');
  fill(clientSelect, rows.map((r) => r.c), 'no client named');
  const count = document.getElementById('count');
  const plural = (n) => n + (n === 1 ? ' decision' : ' decisions');

  const apply = () => {
    const words = text.value.toLowerCase().split(/\s+/).filter((w) => w !== '');
    const p = projectSelect.value;
    const c = clientSelect.value;
    for (const g of projects) g.shown = 0;
    let shown = 0;
    for (const r of rows) {
      const ok = (p === '' || r.p === p) && (c === '' || r.c === c) &&
        words.every((w) => r.hay.includes(w));
      if (ok !== r.shown) {
        r.li.hidden = !ok;
        r.shown = ok;
      }
      if (ok) {
        r.project.shown += 1;
        shown += 1;
      }
    }
    for (const g of projects) g.section.hidden = g.shown === 0;
    for (const d of days) d.section.hidden = d.projects.every((g) => g.shown === 0);
    count.textContent = shown === rows.length ? plural(rows.length)
      : shown + ' of ' + plural(rows.length);
  };
  let pending = false;
  const later = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      apply();
    });
  };
  text.addEventListener('input', later);
  projectSelect.addEventListener('change', apply);
  clientSelect.addEventListener('change', apply);
  apply();
})();
