// One job: facts, timeline, placement, and its output, followed while it runs.

import * as api from './api.js';
import { h, time, duration, stateBadge } from './dom.js';
import { waitText } from './jobs.js';

const NOTICE = new Map([
  ['QUOTA', 'Waiting for quota'],
  ['PREEMPTING', 'Preempting'],
]);

/**
 * What a user needs to act on, above the details: a job held by its queue's quota or waiting
 * for preempted jobs to stop (with the scheduler's numbers), or a running job being stopped by
 * a preemption.
 */
function notice(j) {
  if (j.state === 'PENDING' && NOTICE.has(j.pendingReason)) {
    return [h('span', { class: 'code' }, `${NOTICE.get(j.pendingReason)} (${j.pendingReason})`),
      h('span', { class: 'detail' }, (j.pendingDetail || '').replace(/; predicted start \S+$/, '')),
      j.pendingReason === 'QUOTA' ? [' \u2014 ', h('a', { href: '#/queues' }, 'See the queues\u2019 quotas')] : ''];
  }
  if (j.state === 'RUNNING' && (j.message || '').startsWith('preempted by')) {
    return [h('span', { class: 'code' }, 'Stopping'), h('span', { class: 'detail' }, j.message)];
  }
  return [];
}

/** The controller withheld the job's private data (env, command, paths, output) from this reader. */
const isPrivate = (j) => Array.isArray(j.redacted) && j.redacted.length > 0;
const PRIVATE = '(private)';

export const job = {
  mount(root, idText) {
    const id = Number(idText);
    const title = h('h1', {}, `Job ${id}`);
    const facts = h('dl', { class: 'facts', id: 'job-facts' });
    const callout = h('p', { class: 'callout', id: 'job-notice', role: 'status', hidden: true });
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
      callout,
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
      if (current && isPrivate(current)) {
        logState.textContent = 'The output is private: only the job\u2019s owner and admins read it.';
        done = true;
        return;
      }
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

    const row = (k, v, key) => (v === '' || v == null ? []
      : [h('dt', { 'data-fact': key }, k), h('dd', { 'data-fact': key }, v)]);
    const jobLink = (other) => h('a', { href: `#/jobs/${other}` }, `job ${other}`);

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
      callout.replaceChildren(...notice(j).flat(Infinity).filter((c) => c != null && c !== ''));
      callout.hidden = callout.childNodes.length === 0;
      const preemptions = (j.preemptedAt || []).length;
      facts.replaceChildren(
        ...row('State', stateBadge(j.state), 'state'),
        ...row('Waiting because', waitText(j), 'waiting'),
        ...row('User', j.user, 'user'), ...row('Queue', j.queue, 'queue'),
        ...row('Account', j.account, 'account'),
        ...row('Priority class', j.priorityClass, 'priority-class'),
        ...row('Priority', String(j.priority), 'priority'),
        ...row('Command', isPrivate(j) ? PRIVATE : (j.command || []).join(' '), 'command'),
        ...row('GPUs', `${j.gpus}${j.gpuModel ? ` ${j.gpuModel}` : ''} in ${j.tasks} task${j.tasks === 1 ? '' : 's'}`),
        ...row('Time limit', `${j.timeLimitSec}s`),
        ...row('Attempt', `${j.attempt} (requeued ${j.requeues} time${j.requeues === 1 ? '' : 's'})`),
        ...row('Preempted', preemptions === 0 ? '' : h('span', {},
          `${preemptions} time${preemptions === 1 ? '' : 's'}`,
          j.preemptedBy != null ? [', last by ', jobLink(j.preemptedBy)] : ''), 'preempted'),
        ...row('Last checkpoint', j.lastCheckpoint
          ? `step ${j.lastCheckpoint.step} (attempt ${j.lastCheckpoint.attempt}), ${time(j.lastCheckpoint.time)}`
          : '', 'last-checkpoint'),
        ...row('Exit code', j.exitCode != null ? String(j.exitCode) : ''),
        ...row('Message', j.message || ''),
        ...row('Excluded nodes', (j.excludeNodes || []).join(', ')));
      // Dated events in time order; the requeue count (undated) right after the submit.
      const events = [{ what: 'Submitted', at: j.submitTime, key: 'submitted' }];
      if (j.requeues > 0) {
        events.push({ what: `Requeued ${j.requeues} time${j.requeues === 1 ? '' : 's'}`, sortAt: j.submitTime, key: 'requeued' });
      }
      (j.preemptedAt || []).forEach((at, i, all) => {
        // The API keeps only the last preemptor: earlier preemptions say when, not by whom.
        const last = i === all.length - 1 && j.preemptedBy != null;
        events.push({ what: 'Preempted', at, key: 'preempted', by: last ? j.preemptedBy : null });
      });
      if (j.lastCheckpoint) events.push({ what: `Checkpoint at step ${j.lastCheckpoint.step}`, at: j.lastCheckpoint.time, key: 'checkpoint' });
      if (j.startTime) events.push({ what: j.attempt > 1 ? `Started (attempt ${j.attempt})` : 'Started', at: j.startTime, key: 'started' });
      if (j.state === 'PENDING' && j.predictedStart) events.push({ what: 'Predicted start', at: j.predictedStart, key: 'predicted' });
      if (j.endTime) events.push({ what: `Ended ${j.state}`, at: j.endTime, key: 'ended' });
      const when = (e) => Date.parse(e.at || e.sortAt) || 0;
      events.sort((a, b) => when(a) - when(b));
      timeline.replaceChildren(...events.map((e) => h('li', { 'data-event': e.key },
        h('strong', {}, e.what), e.by != null ? [' by ', jobLink(e.by)] : '', e.at ? ` ${time(e.at)}` : '',
        e.key === 'started' && j.endTime ? ` (ran ${duration(j.startTime, j.endTime)})` : '')));
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
