"""Checkpoints that are complete or absent, for jobs that run under Kairos.

The protocol (the same for one process or a gang of many):

1. every rank writes its shard into ``step-<NNNNNNNNNN>/`` of the job's checkpoint directory
   (``KAIROS_CHECKPOINT_DIR``): to a temporary name, flushed and fsynced, then renamed;
2. rank 0 waits until every shard is there, then writes ``MANIFEST.json`` naming the step and
   the shards (with their sizes and SHA-256), last, by the same atomic rename;
3. a checkpoint without its manifest does not exist: a restart takes the newest step whose
   manifest is there and whose shards match it;
4. rank 0 then reports the checkpoint to Kairos (``POST /api/v1/jobs/ID/checkpoints`` with the
   job's own credential ``KAIROS_JOB_TOKEN``), and deletes the checkpoints Kairos no longer keeps.

A preemption sends the job's checkpoint signal (``KAIROS_CHECKPOINT_SIGNAL``, default USR1) and
waits for the new checkpoint before it stops the job; the next attempt restores it. Use::

    import kairos_ckpt
    ckpt = kairos_ckpt.Checkpointer()          # installs the signal handler
    step, state = ckpt.restore() or (0, init_state())
    while step < total:
        state = train_one_step(state); step += 1
        if ckpt.due():                          # asked (signal) or KAIROS_CHECKPOINT_EVERY passed
            ckpt.save(step, state)

Only the standard library is needed; with torch importable, states are written with
``torch.save`` (tensors included), else with pickle. Run it with Debian's ``/usr/bin/python3``
to find Debian's python3-torch.
"""

import hashlib
import io
import json
import os
import pickle
import re
import shutil
import signal
import ssl
import sys
import time
import urllib.error
import urllib.request

MANIFEST = "MANIFEST.json"
VERSION = 1
_STEP_DIR = re.compile(r"^step-(\d{10})$")
_SHARD = re.compile(r"^shard-(\d{5})-of-(\d{5})\.(pt|pkl)$")

try:  # optional: tensors are saved the way torch saves them
    import torch as _torch
except Exception:  # pragma: no cover - no torch here
    _torch = None


class CheckpointError(Exception):
    """A checkpoint could not be written, or a manifest does not describe a valid checkpoint."""


def step_dir_name(step):
    return "step-%010d" % step


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path, data):
    """Writes ``data`` to ``path`` by a temporary file, fsync and rename (then fsyncs the dir)."""
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(os.path.dirname(path))


def _inside(root, rel):
    """The absolute path of ``rel`` under ``root``; CheckpointError when it would leave it."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel:
        raise CheckpointError("path %r is not relative to the checkpoint directory" % (rel,))
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise CheckpointError("path %r leaves the checkpoint directory" % (rel,))
    full = os.path.realpath(os.path.join(root, rel))
    real_root = os.path.realpath(root)
    if os.path.commonpath([full, real_root]) != real_root:
        raise CheckpointError("path %r leaves the checkpoint directory" % (rel,))
    return full


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _dump(state):
    buf = io.BytesIO()
    if _torch is not None:
        _torch.save(state, buf)
        return buf.getvalue(), "pt"
    pickle.dump(state, buf, protocol=pickle.HIGHEST_PROTOCOL)
    return buf.getvalue(), "pkl"


def _load(path):
    if path.endswith(".pt"):
        if _torch is None:
            raise CheckpointError("%s was written with torch, which is not importable here" % path)
        return _torch.load(path)
    with open(path, "rb") as f:
        return pickle.load(f)


def read_manifest(root, step_name):
    """The manifest of ``root/step_name`` if it describes a complete checkpoint, else None.

    Complete: the manifest parses, names this directory's step, and every shard it names lies
    inside ``root`` and exists with the size it records. A manifest naming a path outside the
    checkpoint directory raises CheckpointError: it is refused, never followed.
    """
    path = os.path.join(root, step_name, MANIFEST)
    try:
        with open(path, "rb") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return None
    m = _STEP_DIR.match(step_name)
    if not m or not isinstance(manifest, dict) or manifest.get("step") != int(m.group(1)):
        return None
    shards = manifest.get("shards")
    if not isinstance(shards, list) or not shards:
        return None
    for shard in shards:
        full = _inside(root, shard.get("path") if isinstance(shard, dict) else None)
        try:
            if os.path.getsize(full) != shard.get("bytes"):
                return None
        except OSError:
            return None
    return manifest


def complete_checkpoints(root):
    """The complete checkpoints in ``root`` as (step, manifest), oldest first."""
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        if _STEP_DIR.match(name):
            try:
                manifest = read_manifest(root, name)
            except CheckpointError as e:
                print("kairos_ckpt: refusing %s: %s" % (name, e), file=sys.stderr, flush=True)
                continue
            if manifest is not None:
                found.append((manifest["step"], manifest))
    found.sort(key=lambda t: t[0])
    return found


class Checkpointer:
    """Saves and restores this rank's state by the protocol above, and talks to Kairos.

    Everything comes from the task's environment unless given: the directory
    (``KAIROS_CHECKPOINT_DIR``), rank and world size (``RANK``, ``WORLD_SIZE``), the signal,
    interval and how many to keep (``KAIROS_CHECKPOINT_SIGNAL``, ``_EVERY``, ``_KEEP``), and the
    controller, job, attempt and credential to report to (``KAIROS_SERVER``, ``KAIROS_CA``,
    ``KAIROS_JOB_ID``, ``KAIROS_ATTEMPT``, ``KAIROS_JOB_TOKEN``). Without a server it only writes.
    """

    def __init__(self, directory=None, rank=None, world_size=None, every=None, keep=None,
                 signal_name=None, report=True, shard_timeout=600.0, env=None):
        env = os.environ if env is None else env
        self.env = env
        self.dir = directory or env.get("KAIROS_CHECKPOINT_DIR")
        if not self.dir:
            raise CheckpointError("no checkpoint directory: set KAIROS_CHECKPOINT_DIR or declare"
                                  " checkpoint in the job")
        self.rank = int(env.get("RANK", "0")) if rank is None else rank
        self.world_size = int(env.get("WORLD_SIZE", "1")) if world_size is None else world_size
        self.every = float(env.get("KAIROS_CHECKPOINT_EVERY", "0")) if every is None else every
        self.keep = int(env.get("KAIROS_CHECKPOINT_KEEP", "3")) if keep is None else keep
        self.report_to_kairos = report
        self.shard_timeout = shard_timeout
        self.requested = False
        self.last_save = time.monotonic()
        self.last_step = None
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        name = signal_name or env.get("KAIROS_CHECKPOINT_SIGNAL", "USR1")
        self.signal = getattr(signal, "SIG" + name.upper().removeprefix("SIG"))
        signal.signal(self.signal, self._asked)

    def _asked(self, signum, frame):
        self.requested = True

    def due(self):
        """Whether to checkpoint now: Kairos asked (the signal), or ``every`` seconds passed."""
        return self.requested or (self.every > 0
                                  and time.monotonic() - self.last_save >= self.every)

    # --- restore ---

    def newest(self):
        """The newest complete checkpoint's (step, manifest), or None."""
        found = complete_checkpoints(self.dir)
        return found[-1] if found else None

    def restore(self):
        """(step, state) of this rank from the newest complete checkpoint, or None if there is none.

        A rank beyond the checkpoint's world size gets shard 0's state (a gang that grew).
        """
        newest = self.newest()
        if newest is None:
            return None
        step, manifest = newest
        shards = manifest["shards"]
        shard = shards[self.rank] if self.rank < len(shards) else shards[0]
        self.last_step = step
        return step, _load(_inside(self.dir, shard["path"]))

    # --- save ---

    def save(self, step, state):
        """Writes this rank's shard of ``step``; rank 0 then writes the manifest and reports it.

        Returns the manifest (rank 0) or None (other ranks). Clears a pending request.
        """
        step = int(step)
        name = step_dir_name(step)
        sdir = os.path.join(self.dir, name)
        os.makedirs(sdir, mode=0o700, exist_ok=True)
        data, fmt = _dump(state)
        shard = "shard-%05d-of-%05d.%s" % (self.rank, self.world_size, fmt)
        _write_atomic(os.path.join(sdir, shard), data)
        self.requested = False
        self.last_save = time.monotonic()
        self.last_step = step
        if self.rank != 0:
            return None
        shards = self._await_shards(sdir)
        manifest = {
            "version": VERSION,
            "step": step,
            "worldSize": self.world_size,
            "time": time.time(),
            "job": self.env.get("KAIROS_JOB_ID"),
            "attempt": self.env.get("KAIROS_ATTEMPT"),
            "shards": [
                {"path": name + "/" + s, "bytes": os.path.getsize(os.path.join(sdir, s)),
                 "sha256": _sha256(os.path.join(sdir, s))}
                for s in shards
            ],
        }
        body = json.dumps(manifest, indent=1).encode()
        pause = self.env.get("KAIROS_CKPT_TEST_PAUSE_BEFORE_MANIFEST")
        if pause:  # tests only: a window in which to kill -9 the writer of the manifest
            tmp = os.path.join(sdir, MANIFEST + ".tmp-%d" % os.getpid())
            with open(tmp, "wb") as f:
                f.write(body[: len(body) // 2])
            print("kairos_ckpt: writing manifest of step %d" % step, flush=True)
            time.sleep(float(pause))
            os.remove(tmp)
        _write_atomic(os.path.join(sdir, MANIFEST), body)
        if self.report_to_kairos:
            self._report(manifest)
        self._prune_local()
        return manifest

    def _await_shards(self, sdir):
        """The shard names of every rank, once all are there (rank 0 polls the file system)."""
        deadline = time.monotonic() + self.shard_timeout
        while True:
            have = sorted(n for n in os.listdir(sdir) if _SHARD.match(n)
                          and int(_SHARD.match(n).group(2)) == self.world_size)
            ranks = {int(_SHARD.match(n).group(1)) for n in have}
            if ranks == set(range(self.world_size)):
                by_rank = {}
                for n in have:
                    by_rank[int(_SHARD.match(n).group(1))] = n
                return [by_rank[r] for r in range(self.world_size)]
            if time.monotonic() > deadline:
                raise CheckpointError("not every rank wrote its shard to %s within %.0fs"
                                      % (sdir, self.shard_timeout))
            time.sleep(0.05)

    # --- Kairos ---

    def _report(self, manifest):
        """Reports a complete checkpoint; deletes what Kairos no longer keeps. Never raises."""
        servers = [s for s in self.env.get("KAIROS_SERVER", "").split(",") if s]
        job, token = self.env.get("KAIROS_JOB_ID"), self.env.get("KAIROS_JOB_TOKEN")
        if not servers or not job or not token:
            return None
        size = sum(s["bytes"] for s in manifest["shards"])
        size += os.path.getsize(os.path.join(self.dir, step_dir_name(manifest["step"]), MANIFEST))
        body = {
            "step": manifest["step"],
            "sizeBytes": size,
            "manifest": step_dir_name(manifest["step"]) + "/" + MANIFEST,
            "files": [s["path"] for s in manifest["shards"]],
        }
        ca = self.env.get("KAIROS_CA")
        context = ssl.create_default_context(cafile=ca) if ca else None
        for attempt in range(3):
            for server in servers:
                req = urllib.request.Request(
                    server.rstrip("/") + "/api/v1/jobs/%s/checkpoints" % job,
                    data=json.dumps(body).encode(), method="POST",
                    headers={"Authorization": "Bearer " + token,
                             "Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=10, context=context) as r:
                        reply = json.load(r)
                except urllib.error.HTTPError as e:
                    if e.code in (400, 403, 404, 409):
                        print("kairos_ckpt: Kairos did not record step %d: %s"
                              % (manifest["step"], e.read().decode(errors="replace")),
                              file=sys.stderr, flush=True)
                        return None
                    continue
                except OSError:
                    continue
                for pruned in reply.get("pruned") or []:
                    self._delete(pruned.get("step"))
                return reply
            time.sleep(0.2 * (attempt + 1))
        print("kairos_ckpt: no controller recorded step %d" % manifest["step"], file=sys.stderr,
              flush=True)
        return None

    def _delete(self, step):
        if isinstance(step, int) and step != self.last_step:
            shutil.rmtree(os.path.join(self.dir, step_dir_name(step)), ignore_errors=True)

    def _prune_local(self):
        """Keeps the newest ``keep`` complete checkpoints; drops older ones and older leftovers."""
        found = complete_checkpoints(self.dir)
        if not found:
            return
        kept = {s for s, _ in found[-self.keep:]}
        oldest_kept = min(kept)
        for name in os.listdir(self.dir):
            m = _STEP_DIR.match(name)
            if m and int(m.group(1)) not in kept and int(m.group(1)) < oldest_kept:
                shutil.rmtree(os.path.join(self.dir, name), ignore_errors=True)
