"""Checkpoints that are complete or absent, for jobs that run under Kairos.

The protocol (the same for one process or a gang of many):

1. every rank writes its shard into ``step-<NNNNNNNNNN>/`` of the job's checkpoint location
   (``KAIROS_CHECKPOINT_URL``: a directory, ``file://``, or object storage, ``s3://bucket/prefix``):
   in a directory to a temporary name, flushed and fsynced, then renamed; in object storage as one
   PUT, which makes the object appear whole or not at all;
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

Only the standard library is needed for a directory; ``s3://`` needs boto3 (Debian's
python3-boto3), which finds the user's credentials its usual way (``~/.aws/credentials``, the
``AWS_*`` variables, an instance role) and the endpoint in ``KAIROS_S3_ENDPOINT`` (set by the agent
from ``kairos agent --checkpoint-s3-endpoint``) or ``AWS_ENDPOINT_URL``. With torch importable,
states are written with ``torch.save`` (tensors included), else with pickle. Run it with Debian's
``/usr/bin/python3`` to find Debian's python3-torch.
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


def _load(name, data):
    if name.endswith(".pt"):
        if _torch is None:
            raise CheckpointError("%s was written with torch, which is not importable here" % name)
        return _torch.load(io.BytesIO(data))
    return pickle.loads(data)


def _check_relative(rel):
    """``rel`` itself when it is a plain relative path ('a/b'); CheckpointError otherwise."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel:
        raise CheckpointError("path %r is not relative to the checkpoint directory" % (rel,))
    if any(p in ("", ".", "..") for p in rel.split("/")):
        raise CheckpointError("path %r leaves the checkpoint directory" % (rel,))
    return rel


class DirStorage:
    """Checkpoints in a directory of a local or shared file system (atomic rename, fsync)."""

    def __init__(self, root):
        self.root = root
        self.url = "file://" + os.path.abspath(root)

    def prepare(self):
        os.makedirs(self.root, mode=0o700, exist_ok=True)

    def steps(self):
        try:
            return [n for n in os.listdir(self.root) if _STEP_DIR.match(n)]
        except FileNotFoundError:
            return []

    def names(self, step_name):
        try:
            return os.listdir(os.path.join(self.root, step_name))
        except FileNotFoundError:
            return []

    def put(self, rel, data):
        path = _inside(self.root, rel)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        _write_atomic(path, data)

    def get(self, rel):
        with open(_inside(self.root, rel), "rb") as f:
            return f.read()

    def size(self, rel):
        """The size of ``rel``, or None when it is not there."""
        try:
            return os.path.getsize(_inside(self.root, rel))
        except OSError:
            return None

    def sha256(self, rel):
        return _sha256(_inside(self.root, rel))

    def delete_step(self, step_name):
        shutil.rmtree(os.path.join(self.root, step_name), ignore_errors=True)

    def delete(self, rel):
        try:
            os.remove(_inside(self.root, rel))
        except OSError:
            pass


class S3Storage:
    """Checkpoints in an S3-compatible object store, under ``s3://bucket/prefix``.

    A PUT is atomic (the object is whole or absent), so a shard needs no temporary name. Each
    shard carries its SHA-256 as object metadata, which rank 0 copies into the manifest without
    downloading the shard.
    """

    def __init__(self, url, env=None, client=None):
        env = os.environ if env is None else env
        rest = url[len("s3://"):]
        self.bucket, _, prefix = rest.partition("/")
        self.prefix = prefix.strip("/")
        if not self.bucket:
            raise CheckpointError("checkpoint URL %r names no bucket: use s3://bucket/prefix" % url)
        self.url = "s3://%s/%s" % (self.bucket, self.prefix) if self.prefix else "s3://" + self.bucket
        if client is None:
            try:
                import boto3
            except ImportError as e:
                raise CheckpointError("checkpoints in %s need boto3 (Debian: apt-get install"
                                      " python3-boto3)" % url) from e
            endpoint = env.get("KAIROS_S3_ENDPOINT") or env.get("AWS_ENDPOINT_URL") or None
            client = boto3.client("s3", endpoint_url=endpoint)
        self.s3 = client

    def _key(self, rel):
        rel = _check_relative(rel)
        return self.prefix + "/" + rel if self.prefix else rel

    def prepare(self):
        pass

    def _list(self, prefix, delimiter=None):
        kw = {"Bucket": self.bucket, "Prefix": prefix}
        if delimiter:
            kw["Delimiter"] = delimiter
        while True:
            page = self.s3.list_objects_v2(**kw)
            yield page
            if not page.get("IsTruncated"):
                return
            kw["ContinuationToken"] = page["NextContinuationToken"]

    def steps(self):
        base = self.prefix + "/" if self.prefix else ""
        found = []
        for page in self._list(base, "/"):
            for p in page.get("CommonPrefixes") or []:
                name = p["Prefix"][len(base):].rstrip("/")
                if _STEP_DIR.match(name):
                    found.append(name)
        return found

    def names(self, step_name):
        base = self._key(step_name) + "/"
        return [o["Key"][len(base):] for page in self._list(base) for o in page.get("Contents") or []]

    def put(self, rel, data):
        self.s3.put_object(Bucket=self.bucket, Key=self._key(rel), Body=data,
                           Metadata={"sha256": hashlib.sha256(data).hexdigest()})

    def get(self, rel):
        return self.s3.get_object(Bucket=self.bucket, Key=self._key(rel))["Body"].read()

    def _head(self, rel):
        try:
            return self.s3.head_object(Bucket=self.bucket, Key=self._key(rel))
        except Exception as e:  # botocore's ClientError 404, or no such bucket
            code = getattr(e, "response", {}).get("Error", {}).get("Code")
            if code in ("404", "NoSuchKey", "NotFound", "NoSuchBucket"):
                return None
            raise

    def size(self, rel):
        head = self._head(rel)
        return None if head is None else head["ContentLength"]

    def sha256(self, rel):
        head = self._head(rel)
        digest = (head or {}).get("Metadata", {}).get("sha256")
        return digest if digest else hashlib.sha256(self.get(rel)).hexdigest()

    def delete_step(self, step_name):
        base = self._key(step_name) + "/"
        keys = [{"Key": o["Key"]} for page in self._list(base) for o in page.get("Contents") or []]
        for i in range(0, len(keys), 1000):
            self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": keys[i:i + 1000]})

    def delete(self, rel):
        self.s3.delete_object(Bucket=self.bucket, Key=self._key(rel))


def storage_for(location, env=None):
    """The storage of a checkpoint location: a directory, ``file://DIR`` or ``s3://bucket/prefix``."""
    if isinstance(location, (DirStorage, S3Storage)):
        return location
    if location.startswith("s3://"):
        return S3Storage(location, env)
    if location.startswith("file://"):
        return DirStorage(location[len("file://"):])
    if "://" in location:
        raise CheckpointError("checkpoint location %r: use a directory, file://DIR or"
                              " s3://bucket/prefix" % location)
    return DirStorage(location)


def read_manifest(root, step_name):
    """The manifest of ``step_name`` if it describes a complete checkpoint, else None.

    ``root`` is a directory or a storage (DirStorage, S3Storage). Complete: the manifest parses,
    names this step, and every shard it names lies inside the checkpoint location and exists with
    the size it records. A manifest naming a path outside the location raises CheckpointError: it
    is refused, never followed.
    """
    store = storage_for(root)
    try:
        manifest = json.loads(store.get(step_name + "/" + MANIFEST))
    except CheckpointError:
        raise
    except Exception:  # absent, unreadable or not JSON: no checkpoint
        return None
    m = _STEP_DIR.match(step_name)
    if not m or not isinstance(manifest, dict) or manifest.get("step") != int(m.group(1)):
        return None
    shards = manifest.get("shards")
    if not isinstance(shards, list) or not shards:
        return None
    for shard in shards:
        rel = _check_relative(shard.get("path") if isinstance(shard, dict) else None)
        if store.size(rel) != shard.get("bytes"):
            return None
    return manifest


def complete_checkpoints(root):
    """The complete checkpoints in ``root`` (a directory or a storage) as (step, manifest),
    oldest first."""
    store = storage_for(root)
    found = []
    for name in store.steps():
        try:
            manifest = read_manifest(store, name)
        except CheckpointError as e:
            print("kairos_ckpt: refusing %s: %s" % (name, e), file=sys.stderr, flush=True)
            continue
        if manifest is not None:
            found.append((manifest["step"], manifest))
    found.sort(key=lambda t: t[0])
    return found


class Checkpointer:
    """Saves and restores this rank's state by the protocol above, and talks to Kairos.

    Everything comes from the task's environment unless given: the location
    (``KAIROS_CHECKPOINT_URL``, else ``KAIROS_CHECKPOINT_DIR``), rank and world size (``RANK``,
    ``WORLD_SIZE``), the signal, interval and how many to keep (``KAIROS_CHECKPOINT_SIGNAL``,
    ``_EVERY``, ``_KEEP``), and the controller, job, attempt and credential to report to
    (``KAIROS_SERVER``, ``KAIROS_CA``, ``KAIROS_JOB_ID``, ``KAIROS_ATTEMPT``,
    ``KAIROS_JOB_TOKEN``). Without a server it only writes.
    """

    def __init__(self, directory=None, rank=None, world_size=None, every=None, keep=None,
                 signal_name=None, report=True, shard_timeout=600.0, env=None, url=None,
                 storage=None):
        env = os.environ if env is None else env
        self.env = env
        location = (storage or url or directory or env.get("KAIROS_CHECKPOINT_URL")
                    or env.get("KAIROS_CHECKPOINT_DIR"))
        if not location:
            raise CheckpointError("no checkpoint location: set KAIROS_CHECKPOINT_URL (or"
                                  " KAIROS_CHECKPOINT_DIR) or declare checkpoint in the job")
        self.store = storage_for(location, env)
        self.dir = self.store.root if isinstance(self.store, DirStorage) else None
        self.url = self.store.url
        self.rank = int(env.get("RANK", "0")) if rank is None else rank
        self.world_size = int(env.get("WORLD_SIZE", "1")) if world_size is None else world_size
        self.every = float(env.get("KAIROS_CHECKPOINT_EVERY", "0")) if every is None else every
        self.keep = int(env.get("KAIROS_CHECKPOINT_KEEP", "3")) if keep is None else keep
        self.report_to_kairos = report
        self.shard_timeout = shard_timeout
        self.requested = False
        self.last_save = time.monotonic()
        self.last_step = None
        self.store.prepare()
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
        found = complete_checkpoints(self.store)
        return found[-1] if found else None

    def restore(self):
        """(step, state) of this rank from the newest complete checkpoint, or None if there is none.

        A rank beyond the checkpoint's world size gets shard 0's state (a gang that grew). The
        shard's SHA-256 must match its manifest's.
        """
        newest = self.newest()
        if newest is None:
            return None
        step, manifest = newest
        shards = manifest["shards"]
        shard = shards[self.rank] if self.rank < len(shards) else shards[0]
        data = self.store.get(_check_relative(shard["path"]))
        if shard.get("sha256") and hashlib.sha256(data).hexdigest() != shard["sha256"]:
            raise CheckpointError("shard %s of step %d does not match its manifest's SHA-256"
                                  % (shard["path"], step))
        self.last_step = step
        return step, _load(shard["path"], data)

    # --- save ---

    def save(self, step, state):
        """Writes this rank's shard of ``step``; rank 0 then writes the manifest and reports it.

        Returns the manifest (rank 0) or None (other ranks). Clears a pending request.
        """
        step = int(step)
        name = step_dir_name(step)
        data, fmt = _dump(state)
        shard = "shard-%05d-of-%05d.%s" % (self.rank, self.world_size, fmt)
        self.store.put(name + "/" + shard, data)
        self.requested = False
        self.last_save = time.monotonic()
        self.last_step = step
        if self.rank != 0:
            return None
        shards = self._await_shards(name)
        manifest = {
            "version": VERSION,
            "step": step,
            "worldSize": self.world_size,
            "time": time.time(),
            "job": self.env.get("KAIROS_JOB_ID"),
            "attempt": self.env.get("KAIROS_ATTEMPT"),
            "shards": [
                {"path": name + "/" + s, "bytes": self.store.size(name + "/" + s),
                 "sha256": self.store.sha256(name + "/" + s)}
                for s in shards
            ],
        }
        body = json.dumps(manifest, indent=1).encode()
        pause = self.env.get("KAIROS_CKPT_TEST_PAUSE_BEFORE_MANIFEST")
        if pause:  # tests only: a window in which to kill -9 the writer of the manifest
            self._half_written_manifest(name, body, float(pause))
        self.store.put(name + "/" + MANIFEST, body)
        if self.report_to_kairos:
            self._report(manifest, len(body))
        self._prune_local()
        return manifest

    def _half_written_manifest(self, name, body, pause):
        """Tests only: half the manifest in flight (a temporary file; an unfinished multipart
        upload in object storage), announced, then a pause in which to kill -9 this process."""
        if isinstance(self.store, DirStorage):
            tmp = os.path.join(self.store.root, name, MANIFEST + ".tmp-%d" % os.getpid())
            with open(tmp, "wb") as f:
                f.write(body[: len(body) // 2])
            print("kairos_ckpt: writing manifest of step %d" % int(name[5:]), flush=True)
            time.sleep(pause)
            os.remove(tmp)
            return
        s3, key = self.store.s3, self.store._key(name + "/" + MANIFEST)
        upload = s3.create_multipart_upload(Bucket=self.store.bucket, Key=key)
        s3.upload_part(Bucket=self.store.bucket, Key=key, UploadId=upload["UploadId"],
                       PartNumber=1, Body=body[: len(body) // 2])
        print("kairos_ckpt: writing manifest of step %d" % int(name[5:]), flush=True)
        time.sleep(pause)
        s3.abort_multipart_upload(Bucket=self.store.bucket, Key=key, UploadId=upload["UploadId"])

    def _await_shards(self, name):
        """The shard names of every rank, once all are there (rank 0 polls the storage)."""
        deadline = time.monotonic() + self.shard_timeout
        delay = 0.05
        while True:
            have = sorted(n for n in self.store.names(name) if _SHARD.match(n)
                          and int(_SHARD.match(n).group(2)) == self.world_size)
            ranks = {int(_SHARD.match(n).group(1)) for n in have}
            if ranks == set(range(self.world_size)):
                by_rank = {}
                for n in have:
                    by_rank[int(_SHARD.match(n).group(1))] = n
                return [by_rank[r] for r in range(self.world_size)]
            if time.monotonic() > deadline:
                raise CheckpointError("not every rank wrote its shard to %s/%s within %.0fs"
                                      % (self.url, name, self.shard_timeout))
            time.sleep(delay)
            if not isinstance(self.store, DirStorage):
                delay = min(delay * 2, 1.0)  # a LIST costs a request: back off

    # --- Kairos ---

    def _report(self, manifest, manifest_bytes):
        """Reports a complete checkpoint; deletes what Kairos no longer keeps. Never raises."""
        servers = [s for s in self.env.get("KAIROS_SERVER", "").split(",") if s]
        job, token = self.env.get("KAIROS_JOB_ID"), self.env.get("KAIROS_JOB_TOKEN")
        if not servers or not job or not token:
            return None
        size = sum(s["bytes"] for s in manifest["shards"]) + manifest_bytes
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
            self.store.delete_step(step_dir_name(step))

    def _prune_local(self):
        """Keeps the newest ``keep`` complete checkpoints; drops older ones and older leftovers."""
        found = complete_checkpoints(self.store)
        if not found:
            return
        kept = {s for s, _ in found[-self.keep:]}
        oldest_kept = min(kept)
        for name in self.store.steps():
            step = int(_STEP_DIR.match(name).group(1))
            if step not in kept and step < oldest_kept:
                self.store.delete_step(name)
