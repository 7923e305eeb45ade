'use strict';
// git rutter timeline: builds the page from the JSON in #data. Every text the record holds is
// set with textContent, never parsed as markup (spec/timeline.md).
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

  const scope = document.getElementById('scope');
  scope.textContent = 'Vault ' + data.vault + ' \u00b7 written ' + data.written;
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
    li.append(el('time', null, d.time));
    li.append(el('span', 'id', d.id));
    if (d.client !== undefined) li.append(el('span', 'client', d.client));
    li.append(el('span', 'summary', d.summary));
    if (d.mark !== undefined) li.append(el('span', 'mark', d.mark));
    const hay = [d.summary];
    if (d.project !== undefined) hay.push(d.project);
    if (d.refs !== undefined) {
      const refs = el('ul', 'refs');
      for (const r of d.refs) {
        const item = el('li');
        item.append(el('code', null, r.path + '@' + r.hash));
        if (r.drift !== undefined) item.append(el('span', 'drift', r.drift));
        refs.append(item);
        hay.push(r.path);
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
