'use strict';
// Polls dashboard/state every second and renders its sections as tables. No dependencies, no
// external URLs: the admin server's content security policy allows only itself.
(function () {
  const POLL_MS = 1000;
  const TIMEOUT_MS = 3000;
  let lastSuccess = null;
  let previous = new Map();

  function format(value) {
    if (value === null || value === undefined) return '\u2014';
    if (Array.isArray(value)) return value.length === 0 ? '\u2014' : value.map(format).join(', ');
    if (typeof value === 'object') {
      const parts = Object.entries(value).map(([k, v]) => k + '=' + format(v));
      return parts.length === 0 ? '\u2014' : parts.join(', ');
    }
    return String(value);
  }

  // Only a boolean that says whether something is healthy gets green or red; "draining: false" is
  // not bad news.
  const HEALTH = /^(ok|ready|healthy|online|connected|up)$/i;

  function cell(tag, value, key, seen, name) {
    const td = document.createElement(tag);
    const text = format(value);
    td.textContent = text;
    if (typeof value === 'number') td.classList.add('num');
    if (typeof value === 'boolean' && HEALTH.test(name)) td.classList.add(String(value));
    if (key !== undefined) {
      seen.set(key, text);
      if (previous.has(key) && previous.get(key) !== text) td.classList.add('changed');
    }
    return td;
  }

  function renderFields(section, table, seen) {
    const body = table.createTBody();
    for (const [name, value] of Object.entries(section.fields)) {
      const tr = body.insertRow();
      tr.dataset.field = name;
      const th = document.createElement('th');
      th.textContent = name;
      tr.appendChild(th);
      tr.appendChild(cell('td', value, section.title + '\u0000' + name, seen, name));
    }
  }

  function renderTable(section, table, seen) {
    const head = table.createTHead().insertRow();
    for (const column of section.columns) {
      const th = document.createElement('th');
      th.textContent = column;
      head.appendChild(th);
    }
    const body = table.createTBody();
    if (section.rows.length === 0) {
      const td = body.insertRow().insertCell();
      td.colSpan = section.columns.length;
      td.className = 'none';
      td.textContent = 'none';
      return;
    }
    section.rows.forEach((row, r) => {
      const tr = body.insertRow();
      tr.dataset.row = String(r);
      row.forEach((value, c) => {
        const td = cell('td', value, section.title + '\u0000' + r + '\u0000' + c, seen, section.columns[c]);
        td.dataset.column = section.columns[c];
        tr.appendChild(td);
      });
    });
  }

  function render(state) {
    document.getElementById('component').textContent = state.component;
    document.title = state.component + ' \u2014 Portage dashboard';
    document.getElementById('server-time').textContent = '(server time ' + state.time + ')';
    const seen = new Map();
    const main = document.createElement('main');
    main.id = 'sections';
    for (const section of state.sections) {
      const el = document.createElement('section');
      el.dataset.section = section.title;
      const h2 = document.createElement('h2');
      h2.textContent = section.title;
      el.appendChild(h2);
      const table = document.createElement('table');
      if (section.fields) renderFields(section, table, seen);
      else renderTable(section, table, seen);
      el.appendChild(table);
      main.appendChild(el);
    }
    document.getElementById('sections').replaceWith(main);
    previous = seen;
  }

  function showError(message) {
    const banner = document.getElementById('error');
    const since = lastSuccess ? ' Showing the state of ' + lastSuccess.toLocaleTimeString() + '.' : '';
    banner.textContent = 'Cannot fetch the live state: ' + message + '.' + since;
    banner.hidden = false;
    document.body.classList.add('stale');
  }

  async function poll() {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
    try {
      const response = await fetch('dashboard/state', { cache: 'no-store', signal: abort.signal });
      const text = await response.text();
      if (!response.ok) throw new Error('HTTP ' + response.status + ' ' + text.trim());
      render(JSON.parse(text));
      lastSuccess = new Date();
      document.getElementById('updated').textContent = 'last updated ' + lastSuccess.toLocaleTimeString();
      document.getElementById('error').hidden = true;
      document.body.classList.remove('stale');
    } catch (e) {
      showError(e.name === 'AbortError' ? 'no answer within ' + TIMEOUT_MS / 1000 + ' s' : e.message);
    } finally {
      clearTimeout(timer);
      setTimeout(poll, POLL_MS);
    }
  }

  poll();
})();
