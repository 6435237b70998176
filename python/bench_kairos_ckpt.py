"""Checkpoint write (and restore) throughput of kairos_ckpt to a directory or to S3.

    /usr/bin/python3 python/bench_kairos_ckpt.py --dir /path/on/the/file/system --mib 64,256 --runs 5
    KAIROS_S3_ENDPOINT=http://host:9000 /usr/bin/python3 python/bench_kairos_ckpt.py \
        --url s3://bucket/bench --mib 64,256 --runs 5

Each run saves one rank's state of the given size (a float32 tensor with torch, else bytes)
as a complete checkpoint (shard, fsync, rename; manifest with SHA-256, fsync, rename; no report
to Kairos), then restores it. Prints the median and the spread (min-max) in MiB/s.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kairos_ckpt  # noqa: E402


def state_of(mib):
    n = mib << 20
    if kairos_ckpt._torch is not None:
        return {"w": kairos_ckpt._torch.rand(n // 4)}
    return {"w": os.urandom(n)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", default=None, help="where to write (default: a temporary directory)")
    p.add_argument("--url", default=None, help="an s3://bucket/prefix to write to instead")
    p.add_argument("--mib", default="64,256")
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    root = args.url.rstrip("/") + "/kairos-ckpt-bench-%d" % os.getpid() if args.url else \
        tempfile.mkdtemp(dir=args.dir, prefix="kairos-ckpt-bench-")
    try:
        print("kairos_ckpt throughput into %s (%s), %d runs each"
              % (root, "torch.save" if kairos_ckpt._torch is not None else "pickle", args.runs))
        for mib in [int(m) for m in args.mib.split(",")]:
            state = state_of(mib)
            writes, reads = [], []
            for run in range(args.runs):
                where = "%s/%d" % (root, mib)
                ck = kairos_ckpt.Checkpointer(url=where, rank=0, world_size=1, keep=1,
                                              report=False, env=dict(os.environ) if args.url else {})
                t0 = time.perf_counter()
                ck.save(run + 1, state)
                writes.append(mib / (time.perf_counter() - t0))
                t0 = time.perf_counter()
                step, _ = ck.restore()
                reads.append(mib / (time.perf_counter() - t0))
                assert step == run + 1
            print("%5d MiB: write median %7.1f MiB/s (%.1f-%.1f)   restore median %7.1f MiB/s"
                  " (%.1f-%.1f)" % (mib, statistics.median(writes), min(writes), max(writes),
                                    statistics.median(reads), min(reads), max(reads)))
    finally:
        if args.url:
            for mib in [int(m) for m in args.mib.split(",")]:
                store = kairos_ckpt.storage_for("%s/%d" % (root, mib))
                for step in store.steps():
                    store.delete_step(step)
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
