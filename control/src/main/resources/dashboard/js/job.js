// One job: facts, timeline, placement, and its output, followed while it runs.

import * as api from './api.js';
import { h, time, duration, stateBadge } from './dom.js';
import { waitText } from './jobs.js';

export const job = {
  mount(root, idText) {
    const id = Number(idText);
    const title = h('h1', {}, `Job ${id}`);
    const facts = h('dl', { class: 'facts', id: 'job-facts' });
    const timeline = h('ol', { class: 'timeline', id: 'job-timeline' });
    const placement = h('tbody');
    const task = h('select', { id: 'log-task' }, h('option', { value: '0' }, '0'));
    const stream = h('select', { id: 'log-stream' },
      h('option', { value: 'stdout' }, 'stdout'), h('option', { value: 'stderr' }, 'stderr'));
    const logs = h('pre', { class: 'logs', id: 'job-logs', tabindex: '0', 'aria-label': 'Task output' });
    const logState = h('p', { class: 'muted', id: 'log-state', 'aria-live': 'polite' });
    let current = null;
    let offset = 0;
    let done = false;
    let polling = null;
    let stopped = false;

    const resetLogs = () => {
      offset = 0;
      done = false;
      logs.textContent = '';
      readLogs();
    };
    task.addEventListener('change', resetLogs);
    stream.addEventListener('change', resetLogs);

    root.append(
      h('p', {}, h('a', { href: '#/jobs' }, '\u2190 All jobs')),
      title,
      h('div', { class: 'grid2' },
        h('section', { class: 'card', 'aria-labelledby': 'facts-h' }, h('h2', { id: 'facts-h' }, 'Details'), facts),
        h('section', { class: 'card', 'aria-labelledby': 'timeline-h' }, h('h2', { id: 'timeline-h' }, 'Timeline'), timeline)),
      h('section', { class: 'card', 'aria-labelledby': 'placement-h' },
        h('h2', { id: 'placement-h' }, 'Placement'),
        h('table', { id: 'job-placement' }, h('thead', {}, h('tr', {},
          h('th', { scope: 'col', class: 'num' }, 'Task'), h('th', { scope: 'col' }, 'Node'),
          h('th', { scope: 'col' }, 'GPUs'))), placement)),
      h('section', { class: 'card', 'aria-labelledby': 'logs-h' },
        h('h2', { id: 'logs-h' }, 'Output'),
        h('div', { class: 'toolbar' },
          h('label', { for: 'log-task' }, 'Task', task), h('label', { for: 'log-stream' }, 'Stream', stream)),
        logState, logs));

    async function readLogs() {
      if (!current || current.attempt === 0 || !current.placement) {
        logState.textContent = 'No output: the job has not started.';
        return;
      }
      try {
        for (let i = 0; i < 20 && !stopped; i++) {
          const r = await api.logs(id, { task: Number(task.value), stream: stream.value, offset });
          if (r.text) logs.append(r.text);
          const more = r.offset > offset;
          offset = r.offset;
          done = r.done;
          if (!more) break;
        }
        logState.textContent = done ? 'Output complete.' : 'Following the output\u2026';
      } catch (e) {
        logState.textContent = `Output not available: ${e.message}`;
        done = true;
      }
    }

    const row = (k, v) => (v === '' || v == null ? [] : [h('dt', {}, k), h('dd', {}, v)]);

    this.refresh = async () => {
      let j;
      try {
        j = await api.get(`/api/v1/jobs/${id}`);
      } catch (e) {
        if (e.status === 404) {
          title.textContent = `No job ${id}`;
          return;
        }
        throw e;
      }
      const restarted = current && current.attempt !== j.attempt;
      current = j;
      title.textContent = `Job ${j.id}${j.name ? ` \u2014 ${j.name}` : ''}`;
      facts.replaceChildren(
        ...row('State', stateBadge(j.state)),
        ...row('Waiting because', waitText(j)),
        ...row('User', j.user), ...row('Queue', j.queue), ...row('Priority', String(j.priority)),
        ...row('Command', (j.command || []).join(' ')),
        ...row('GPUs', `${j.gpus}${j.gpuModel ? ` ${j.gpuModel}` : ''} in ${j.tasks} task${j.tasks === 1 ? '' : 's'}`),
        ...row('Time limit', `${j.timeLimitSec}s`),
        ...row('Attempt', `${j.attempt} (requeued ${j.requeues} time${j.requeues === 1 ? '' : 's'})`),
        ...row('Exit code', j.exitCode != null ? String(j.exitCode) : ''),
        ...row('Message', j.message || ''),
        ...row('Excluded nodes', (j.excludeNodes || []).join(', ')));
      const events = [['Submitted', j.submitTime]];
      if (j.requeues > 0) events.push([`Requeued ${j.requeues} time${j.requeues === 1 ? '' : 's'}`, null]);
      if (j.startTime) events.push([j.attempt > 1 ? `Started (attempt ${j.attempt})` : 'Started', j.startTime]);
      if (j.state === 'PENDING' && j.predictedStart) events.push(['Predicted start', j.predictedStart]);
      if (j.endTime) events.push([`Ended ${j.state}`, j.endTime]);
      timeline.replaceChildren(...events.map(([what, at]) => h('li', {},
        h('strong', {}, what), at ? ` ${time(at)}` : '',
        what === 'Started' && j.endTime ? ` (ran ${duration(j.startTime, j.endTime)})` : '')));
      placement.replaceChildren(...(j.placement || []).map((p) => h('tr', {},
        h('td', { class: 'num' }, p.task), h('td', {}, p.node), h('td', {}, p.gpus.join(', ') || 'none'))));
      const tasks = (j.placement || []).length || 1;
      if (task.options.length !== tasks) {
        task.replaceChildren(...Array.from({ length: tasks }, (_, i) => h('option', { value: String(i) }, String(i))));
      }
      if (restarted) {
        offset = 0;
        logs.textContent = '';
      }
      if (!done || restarted) await readLogs();
    };

    // Output grows without a state change: poll it every two seconds while the job runs.
    polling = setInterval(() => {
      if (current && current.state === 'RUNNING' && !done) readLogs();
    }, 2000);
    this.stop = () => {
      stopped = true;
      clearInterval(polling);
    };
    return this;
  },
};
