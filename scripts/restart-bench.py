#!/usr/bin/env python3
"""Agent-restart benchmark: restarting `kairos agent` under a running gang kills nothing.

Starts `kairos server` and two agents (real processes, via ./kairos, one emulated GPU each), runs
one two-node gang whose ranks count steps into files, then for each trial stops one of the gang's
agents (odd trials kill -9, even trials SIGTERM, as an upgrade does), starts it again on the same
data directory, and measures

  restart   from the stop until the node's new epoch shows in GET /api/v1/nodes (the new agent
            adopted the task and registered);

and checks that the gang never noticed: still RUNNING, attempt 1, no requeue, each rank's pid
unchanged and its step counter never reset. Prints each trial, then median, p95, min and max, and
the number of jobs killed (0 is the only right answer).

A restart that takes longer than the failure detector allows is safe but not free: the node is
called DOWN, the job is requeued and the new agent's adopted task is killed (counted as a job
killed here).

Usage: scripts/restart-bench.py [--trials 20] [--port 18670] [--pause 6s] [--lease 10s] [--json]
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KAIROS = os.path.join(ROOT, "kairos")

COUNTER = ("echo $$ > $KAIROS_CHECKPOINT_DIR/pid-$RANK; i=0;"
           " while [ ! -f $KAIROS_CHECKPOINT_DIR/stop ]; do i=$((i+1));"
           " echo $i >> $KAIROS_CHECKPOINT_DIR/steps-$RANK; sleep 0.1; done")


class Cluster:
    def __init__(self, port, pause, lease):
        self.dir = tempfile.mkdtemp(prefix="kairos-restart-bench-")
        os.chmod(self.dir, 0o755)
        self.url = f"http://127.0.0.1:{port}"
        self.logs = []
        # A restart must register before the failure detector calls the node down (else the job
        # is requeued, as for a lost node): --pause gives the detector more room than its default.
        # The lease bounds it too (DOWN once it has surely run out), and the fence watchdog kills
        # the tasks when it runs out: --lease gives a restart more room than the default 3.5 s.
        extra = ["--acceptable-heartbeat-pause", pause] if pause else []
        extra += ["--lease", lease] if lease else []
        self.server = self._spawn("server", [KAIROS, "server", "--data", f"{self.dir}/ctl",
                                             "--listen", f"127.0.0.1:{port}", "--allow-root-jobs"]
                                  + extra)
        self.token = self._wait_file(f"{self.dir}/ctl/admin.token")
        self.agents = {}
        for i in range(2):
            self.start_agent(f"n{i + 1}", i + 2)

    def _spawn(self, name, argv):
        log = open(f"{self.dir}/{name}.log", "ab")
        self.logs.append(log)
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)

    def _wait_file(self, path, limit=120):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if os.path.exists(path) and open(path).read().strip():
                return open(path).read().strip()
            time.sleep(0.2)
        sys.exit(f"timed out waiting for {path}")

    def start_agent(self, name, host):
        self.agents[name] = (self._spawn(f"agent-{name}", [
            KAIROS, "agent", "--controller", self.url,
            "--join-token-file", f"{self.dir}/ctl/join.token", "--node-name", name,
            "--data", f"{self.dir}/agent-{name}", "--emulate-gpus", "1", "--allow-root-jobs",
            "--listen", f"127.0.0.{host}:0"]), host)

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return json.loads(r.read() or b"null")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return None

    def node(self, name):
        for n in self.request("GET", "/api/v1/nodes") or []:
            if n["name"] == name:
                return n
        return {}

    def job(self, job_id):
        return self.request("GET", f"/api/v1/jobs/{job_id}") or {}

    def wait(self, condition, limit, what, poll=0.02):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if condition():
                return time.monotonic()
            time.sleep(poll)
        sys.exit(f"timed out after {limit}s waiting for {what}; logs in {self.dir}")

    def close(self):
        for p, _ in self.agents.values():
            p.send_signal(signal.SIGTERM)
        self.server.send_signal(signal.SIGTERM)
        for p in [p for p, _ in self.agents.values()] + [self.server]:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in self.logs:
            log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def lines(path):
    try:
        with open(path) as f:
            return f.read().split()
    except OSError:
        return []


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--port", type=int, default=18670)
    ap.add_argument("--pause", help="the controller's --acceptable-heartbeat-pause (default: its"
                    " own default, 3s)")
    ap.add_argument("--lease", help="the controller's --lease (default: its own default, 3500ms)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args()
    cluster = Cluster(args.port, args.pause, args.lease)
    for name in cluster.agents:
        cluster.wait(lambda: cluster.node(name).get("state") == "UP", 120, f"{name} up")
    out = os.path.join(cluster.dir, "gang")
    os.makedirs(out)
    os.chmod(out, 0o777)
    restarts, killed_jobs, trials = [], 0, []
    try:
        job_id = cluster.request("POST", "/api/v1/jobs", {
            "command": ["/bin/sh", "-c", COUNTER], "gpus": 2, "gpusPerNode": 1,
            "timeLimit": "2h", "gracePeriod": "1s", "checkpointDir": out})["id"]
        cluster.wait(lambda: cluster.job(job_id).get("state") == "RUNNING", 60, "the gang runs")
        cluster.wait(lambda: len(lines(f"{out}/steps-0")) > 3 and len(lines(f"{out}/steps-1")) > 3,
                     60, "both ranks count")
        pids = [open(f"{out}/pid-{r}").read().strip() for r in (0, 1)]
        placement = cluster.job(job_id)["placement"]
        for trial in range(1, args.trials + 1):
            victim = placement[trial % 2]["node"]
            how = "kill -9" if trial % 2 else "SIGTERM"
            process, host = cluster.agents[victim]
            epoch = cluster.node(victim).get("epoch")
            before = [len(lines(f"{out}/steps-{r}")) for r in (0, 1)]
            start = cluster.job(job_id)
            stopped = time.monotonic()
            process.send_signal(signal.SIGKILL if trial % 2 else signal.SIGTERM)
            process.wait(60)
            cluster.start_agent(victim, host)
            back = cluster.wait(lambda: cluster.node(victim).get("epoch", epoch) != epoch
                                and cluster.node(victim).get("state") == "UP", 60,
                                f"{victim} registers again")
            cluster.wait(lambda: all(len(lines(f"{out}/steps-{r}")) > before[r] + 5 for r in (0, 1)),
                         90, "both ranks go on counting")
            job = cluster.job(job_id)
            # This trial's steps follow on from the last one before it, without a reset.
            continuous = True
            for r in (0, 1):
                steps = [int(x) for x in lines(f"{out}/steps-{r}")[max(0, before[r] - 1):]]
                continuous &= all(b == a + 1 for a, b in zip(steps, steps[1:]))
            now = [open(f"{out}/pid-{r}").read().strip() for r in (0, 1)]
            same = now == pids
            pids = now
            ok = (job.get("state") == "RUNNING" and job.get("attempt") == start.get("attempt")
                  and job.get("requeues") == start.get("requeues") and continuous and same)
            killed_jobs += 0 if ok else 1
            r = back - stopped
            restarts.append(r)
            trials.append({"trial": trial, "how": how, "node": victim, "restart_s": r, "ok": ok})
            print(f"trial {trial:2d}: {how:7s} {victim}: registered again after {r:5.2f} s;"
                  f" job attempt {job.get('attempt')}, requeues {job.get('requeues')},"
                  f" counters continuous {continuous}, pids unchanged {same}", flush=True)
        open(f"{out}/stop", "w").close()
        cluster.wait(lambda: cluster.job(job_id).get("state") in ("SUCCEEDED", "FAILED"), 60,
                     "the gang ends")
        final = cluster.job(job_id)
    finally:
        cluster.close()
    summary = {
        "trials": len(restarts),
        "jobs_killed": killed_jobs,
        "final_state": final.get("state"),
        "final_attempt": final.get("attempt"),
        "restart_s": {"median": statistics.median(restarts), "p95": percentile(restarts, 0.95),
                      "min": min(restarts), "max": max(restarts)},
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        s = summary["restart_s"]
        print(f"agent stop to registered again: median {s['median']:.2f} s  p95 {s['p95']:.2f} s"
              f"  min {s['min']:.2f} s  max {s['max']:.2f} s  ({summary['trials']} trials)")
        print(f"jobs killed: {killed_jobs}; the gang ended {final.get('state')}"
              f" as attempt {final.get('attempt')}")


if __name__ == "__main__":
    main()
