#!/usr/bin/env python3
"""Node-failure benchmark: how fast Kairos notices a dead agent and runs its job elsewhere.

Starts `kairos server` and N agents (real processes, via ./kairos, one emulated GPU each), then
for each trial: submits a job (one GPU, or with --gang K a gang of K one-GPU ranks on K nodes),
waits until it runs, kill -9s the agent of its rank 0's node, and measures

  detection  from the kill until GET /api/v1/nodes shows the node DOWN (the phi-accrual
             detector's verdict, or the lost agent's lease surely over, committed through the log);
  recovery   from the kill until the job RUNS again, as its next attempt, with no rank on the
             lost node (the lost agent's lease plus the margin, the other ranks stopped, a
             scheduling pass and the start).

The killed agent is restarted between trials. Prints the load average before and after, each
trial, then median, p95, min and max. --server-args passes options to `kairos server` (e.g.
"--lease 10s" to compare lease lengths).

Usage: scripts/failure-bench.py [--trials 20] [--agents 3] [--gang 1] [--port 18650]
                                [--server-args "..."] [--json]
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
# Run as root, the admin token's jobs run as root: the controller and agents must allow it.
ROOT_JOBS = ["--allow-root-jobs"] if os.geteuid() == 0 else []
KAIROS = os.path.join(ROOT, "kairos")


class Cluster:
    def __init__(self, port, agents, server_args=()):
        self.dir = tempfile.mkdtemp(prefix="kairos-failure-bench-")
        self.url = f"http://127.0.0.1:{port}"
        self.logs = []
        self.server = self._spawn("server", [KAIROS, "server", "--data", f"{self.dir}/ctl",
                                             "--listen", f"127.0.0.1:{port}"] + ROOT_JOBS
                                  + list(server_args))
        self.token = self._wait_file(f"{self.dir}/ctl/admin.token")
        self.agents = {}
        for i in range(agents):
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
            "--data", f"{self.dir}/agent-{name}", "--emulate-gpus", "1",
            "--listen", f"127.0.0.{host}:0"] + ROOT_JOBS), host)
        self.wait(lambda: self.node(name).get("state") == "UP"
                  and self.node(name).get("liveness") == "ALIVE", 120, f"{name} up")

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
        self.keep = True  # the logs explain the failure: close() leaves them
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
        if not getattr(self, "keep", False):
            shutil.rmtree(self.dir, ignore_errors=True)


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--agents", type=int, default=3)
    ap.add_argument("--port", type=int, default=18650)
    ap.add_argument("--gang", type=int, default=1, help="ranks of the job, one GPU each, one per node")
    ap.add_argument("--server-args", default="", help="extra `kairos server` options")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args()
    if args.agents < args.gang + 1:
        sys.exit("--agents must be at least --gang + 1: the job needs somewhere to go")
    print(f"load average before: {os.getloadavg()}", flush=True)
    cluster = Cluster(args.port, args.agents, args.server_args.split())
    detections, recoveries = [], []
    try:
        for trial in range(1, args.trials + 1):
            job = {"command": ["sleep", "3600"], "gpus": args.gang, "timeLimit": "1h",
                   "gracePeriod": "1s"}
            if args.gang > 1:
                job["gpusPerNode"] = 1
            job_id = cluster.request("POST", "/api/v1/jobs", job)["id"]
            cluster.wait(lambda: cluster.job(job_id).get("state") == "RUNNING", 60, f"job {job_id} runs")
            victim = cluster.job(job_id)["placement"][0]["node"]
            time.sleep(3)  # a few heartbeats after the start, as in steady state
            process, host = cluster.agents[victim]
            killed = time.monotonic()
            process.send_signal(signal.SIGKILL)
            detected = cluster.wait(lambda: cluster.node(victim).get("state") == "DOWN", 60,
                                    f"{victim} down")
            running = cluster.wait(lambda: (lambda j: j.get("state") == "RUNNING"
                                            and j.get("attempt") == 2
                                            and all(p["node"] != victim
                                                    for p in j.get("placement") or []))(
                cluster.job(job_id)), 90, f"job {job_id} runs again")
            elsewhere = cluster.job(job_id)["placement"][0]["node"]
            d, r = detected - killed, running - killed
            detections.append(d)
            recoveries.append(r)
            print(f"trial {trial:2d}: killed {victim}: down after {d:6.2f} s, job {job_id}"
                  f" running on {elsewhere} after {r:6.2f} s", flush=True)
            cluster.request("POST", f"/api/v1/jobs/{job_id}/cancel")
            process.wait()
            cluster.start_agent(victim, host)
    finally:
        cluster.close()
    summary = {
        "trials": len(detections),
        "detection_s": {"median": statistics.median(detections), "p95": percentile(detections, 0.95),
                        "min": min(detections), "max": max(detections)},
        "recovery_s": {"median": statistics.median(recoveries), "p95": percentile(recoveries, 0.95),
                       "min": min(recoveries), "max": max(recoveries)},
    }
    summary["load_average_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for key, label in (("detection_s", "kill -9 to node DOWN"), ("recovery_s", "kill -9 to job running elsewhere")):
            s = summary[key]
            print(f"{label:34s} median {s['median']:.2f} s  p95 {s['p95']:.2f} s"
                  f"  min {s['min']:.2f} s  max {s['max']:.2f} s  ({summary['trials']} trials)")
        print(f"load average after: {summary['load_average_after']}")


if __name__ == "__main__":
    main()
