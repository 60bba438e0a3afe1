// Run detail: header with status and the moves the human may make, then one
// section per kind of thing a run has. Every section has a stable container
// and is rebuilt only when its own data changed (see patch in dom.js), so a
// live refresh keeps focus, scroll positions and the task filter.

import {h, replace, patch, ago, statusBadge, errorBox, errorText, kv} from './dom.js';
import {op, Submission, mutate} from './api.js';
import {machineSvg, taskGraph} from './graphs.js';
import * as S from './run_sections.js';

const machineCache = new Map();
async function getMachine(name) {
  if (!machineCache.has(name)) {
    machineCache.set(name, op('machine.show', {name}).catch(e => { machineCache.delete(name); throw e; }));
  }
  return machineCache.get(name);
}

// Settle a promise into {ok, value} | {ok:false, error}.
const settle = p => p.then(value => ({ok: true, value}), error => ({ok: false, error}));

export function mount(root, ctx) {
  const {app} = ctx;
  const id = ctx.params[0];
  const head = h('div', {class: 'run-head'});
  const moves = h('div', {class: 'moves', 'data-test': 'moves'});
  const moveErr = h('p', {class: 'err', role: 'alert', 'data-test': 'move-error'});
  root.append(head, h('div', {class: 'card'}, h('h2', null, 'Status'), moves, moveErr));

  // Section containers, in page order. Hidden until they have something to show.
  const box = {};
  const mk = (key, title, extra) => {
    const body = h('div', {class: 'section-body'});
    const el = h('section', {class: 'card', 'data-section': key, hidden: true}, h('h2', null, title), extra || null, body);
    root.append(el);
    box[key] = {el, body};
  };
  mk('machine', 'State machine');
  mk('tasks', 'Tasks');
  mk('progress', 'Progress');
  mk('todos', 'Todos');
  mk('questions', 'Questions');
  mk('approvals', 'Approvals');
  mk('usage', 'Cost and tokens');
  mk('checkpoints', 'Checkpoints');
  mk('messages', 'Messages');
  mk('chat', 'Chat');
  mk('ledger', 'Ledger');
  mk('mirrors', 'Mirrors');

  const show = (key, on) => { box[key].el.hidden = !on; };
  // Fill a section from a settled result; an op that failed shows its message there.
  const fill = (key, res, build, isEmpty) => {
    if (!res) { show(key, false); return; }
    if (!res.ok) {
      show(key, true);
      patch(box[key].body, {error: errorText(res.error)}, () => errorBox(res.error));
      return;
    }
    if (isEmpty && isEmpty(res.value)) { show(key, false); box[key].body._sig = undefined; return; }
    show(key, true);
    patch(box[key].body, res.value, () => build(res.value));
  };

  let run = null;
  let taskFilter = '';
  const ledger = S.runLedger(id);       // paged, merges by seq
  const checkpoints = S.checkpointPanel(id, app); // keeps the chosen checkpoint

  async function refresh() {
    const r = await settle(op('run.show', {id, progress_limit: 100}));
    if (!ctx.isCurrent()) return;
    if (!r.ok) { replace(head, h('h1', null, 'Run ', h('span', {class: 'mono'}, id)), errorBox(r.error)); return; }
    run = r.value;
    const isGraph = run.profile === 'graph';
    const isSgai = run.profile === 'sgai';

    const [mach, tasks, qs, aps, mail, usage, mirrors, chat, cps, path] = await Promise.all([
      settle(getMachine(run.machine)),
      settle(op('task.list', {run: id, with_dependencies: true, limit: 100000})),
      settle(op('question.list', {run: id, status: 'all'})),
      settle(op('approval.list', {run: id})),
      settle(op('mail.list', {run: id})),
      settle(op('run.usage', {run: id})),
      settle(op('mirror.list', {run: id})),
      settle(op('chat.channels', run.project_id ? {project: run.project_id} : {})),
      isGraph ? settle(op('graph.checkpoints', {id})) : null,
      isGraph ? settle(op('graph.path', {id})) : null,
      ledger.refresh(),
    ]);
    if (!ctx.isCurrent()) return;
    const todos = isSgai ? await settle(S.loadTodos(run, tasks, usage, mail)) : null;

    patch(head, [run.id, run.title, run.status, run.profile, run.machine, run.updated_at, run.project_id], () => [
      h('div', {class: 'page-head'},
        h('h1', null, run.title || run.id), statusBadge(run.status)),
      kv([['Id', h('span', {class: 'mono'}, run.id)], ['Profile', run.profile], ['Machine', run.machine],
        ['Project', run.project_id], ['Created', ago(run.created_at)], ['Updated', ago(run.updated_at)],
        ['Cursor', run.cursor ?? undefined]]),
    ]);
    patch(moves, [run.status, run.version, mach.ok && mach.value.name, isGraph], () =>
      isGraph ? graphMoves(run) : machineMoves(run, mach.ok ? mach.value.machine : null));

    fill('machine', mach.ok ? {ok: true, value: {m: mach.value.machine, status: run.status}} : mach,
      v => machineSvg(v.m, v.status));

    // Tasks: keep the filter text across rebuilds.
    fill('tasks', tasks, v => {
      const g = taskGraph(v.tasks || []);
      if (g.filter) {
        g.filter.value = taskFilter;
        g.filter.addEventListener('input', () => { taskFilter = g.filter.value; });
        if (taskFilter) g.filter.dispatchEvent(new Event('input'));
      }
      return g.el;
    }, v => !(v.tasks || []).length && !Object.keys(run.task_counts || {}).length);

    fill('progress', {ok: true, value: run.progress || []},
      v => S.progressList(v, run.progress_count ?? v.length), v => !v.length);
    fill('todos', todos, S.todoLists, v => !v.some(l => (l.todos || []).length));
    fill('questions', qs, S.questionList, v => !(v.questions || []).length);
    fill('approvals', aps, S.approvalList, v => !(v.decisions || []).length);
    fill('usage', usage, S.usageTable, v => !(v.rows || []).length);
    if (isGraph) {
      show('checkpoints', true);
      checkpoints.update(box.checkpoints.body, cps, path);
    } else show('checkpoints', false);
    fill('messages', mail, S.messageList, v => !(v.messages || []).length);
    fill('chat', chat, S.chatChannels, v => !(v.channels || []).length);
    show('ledger', true);
    ledger.render(box.ledger.body);
    fill('mirrors', mirrors, S.mirrorList, v => !(v.mirrors || []).length);
  }

  // Buttons for the run machine's next states from the current status.
  function machineMoves(run, machine) {
    if (!machine) return h('p', {class: 'muted'}, 'The run machine could not be read.');
    const role = app.role;
    const next = [];
    for (const t of machine.transitions || []) {
      if (t.from !== run.status || t.to === run.status) continue;
      // Transitions reserved to other operations are not run.set_status moves.
      if (Array.isArray(t.ops) && t.ops.length && !t.ops.includes('run.set_status')) continue;
      if (Array.isArray(t.roles) && t.roles.length && role && !t.roles.includes(role) && !t.roles.includes('*')) continue;
      if (!next.some(x => x.to === t.to)) next.push(t);
    }
    if (!next.length) return h('p', {class: 'muted'}, `No moves from ${run.status}.`);
    return next.map(t => {
      const sub = new Submission();
      return h('button', {type: 'button', class: 'secondary', 'data-test': 'move-status', 'data-status': t.to,
        title: t.note || '', onclick: async (e) => {
          const b = e.currentTarget;
          b.disabled = true; moveErr.textContent = '';
          try { await sub.run('run.set_status', {id: run.id, status: t.to}); app.scheduleRefresh(0); }
          catch (ex) { moveErr.textContent = errorText(ex); }
          finally { b.disabled = false; }
        }}, `→ ${t.to}`);
    });
  }

  // Graph runs move through their runner: pause, resume, cancel.
  function graphMoves(run) {
    const st = run.status;
    const btn = (label, name, input, test, confirmText) => h('button', {type: 'button',
      class: name === 'graph.cancel' ? 'danger' : 'secondary', 'data-test': test, onclick: async (e) => {
        if (confirmText && !window.confirm(confirmText)) return;
        const b = e.currentTarget;
        b.disabled = true; moveErr.textContent = '';
        try { await mutate(name, input); app.scheduleRefresh(0); }
        catch (ex) { moveErr.textContent = errorText(ex); }
        finally { b.disabled = false; }
      }}, label);
    const out = [];
    if (st === 'running' || st === 'pending') out.push(btn('Pause', 'graph.pause', {id: run.id}, 'graph-pause'));
    // wait_for_human false: the request returns at a human node instead of holding a worker.
    if (st === 'paused' || st === 'failed') out.push(btn('Resume', 'graph.resume', {id: run.id, wait_for_human: false}, 'graph-resume'));
    if (st !== 'completed' && st !== 'failed') out.push(btn('Cancel', 'graph.cancel', {id: run.id}, 'graph-cancel',
      'Cancel this graph run for good? It can only be forked afterwards.'));
    return out.length ? out : h('p', {class: 'muted'}, `No moves from ${st}.`);
  }

  refresh();
  return {
    refresh,
    // Only events of this run (or of no run: agents, boards) change what the page shows.
    wants: ev => !ev.run_id || ev.run_id === id,
    onReset: () => ledger.reset(),
  };
}
