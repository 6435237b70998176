#!/usr/bin/python3
"""An elastic data-parallel training loop for torchrun under Kairos (docs/examples/elastic.yaml).

Each node's task is one torchrun elastic agent (docs/examples/torchrun_elastic.sh); torchrun
starts this script's workers with RANK and WORLD_SIZE of the current rendezvous round and
restarts them when a node joins (a grow) or leaves (a shrink). Every start restores the newest
complete checkpoint (kairos_ckpt), so a resize loses at most the steps since the last one.

The math does not depend on the world size: every step draws one global batch of GLOBAL_BATCH
rows (seeded by the step number), each rank takes its share of the rows, and the gradient is the
all-reduced sum over all rows divided by GLOBAL_BATCH. The model is a float64 linear regression
with plain SGD, so a run that grows and shrinks follows the same loss curve as one that never
resizes, up to float rounding; ``--reference`` runs that unresized curve in one process.

Checkpoints are collective: a rank that is due (the checkpoint signal from Kairos, or every
``--save-every`` steps) says so in an all-reduce, and then every rank saves the same step, rank 0
writing the manifest last. Rank 0 appends ``restored``, ``step``, ``saved`` and ``done`` lines
to ``--progress`` and the final parameters to ``--result`` (JSON).
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import kairos_ckpt  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

GLOBAL_BATCH = 60
FEATURES = 16
LR = 0.05


def init_state():
    g = torch.Generator().manual_seed(0)
    return {"w": torch.randn(FEATURES, 1, generator=g, dtype=torch.float64) * 0.1,
            "b": torch.zeros(1, dtype=torch.float64)}


def batch(step):
    """The global batch of ``step``: the same rows whatever the world size."""
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(GLOBAL_BATCH, FEATURES, generator=g, dtype=torch.float64)
    true_w = torch.arange(1, FEATURES + 1, dtype=torch.float64).unsqueeze(1) / FEATURES
    y = x @ true_w + 0.5 + 0.01 * torch.randn(GLOBAL_BATCH, 1, generator=g, dtype=torch.float64)
    return x, y


def rows(rank, world):
    """This rank's contiguous share of the global batch's rows."""
    return GLOBAL_BATCH * rank // world, GLOBAL_BATCH * (rank + 1) // world


def train_step(step, state, rank, world, reduce):
    """One SGD step on the global batch; returns the global mean squared error before it."""
    x, y = batch(step)
    lo, hi = rows(rank, world)
    w = state["w"].clone().requires_grad_(True)
    b = state["b"].clone().requires_grad_(True)
    err = x[lo:hi] @ w + b - y[lo:hi]
    local = (err * err).sum()
    local.backward()
    flat = torch.cat([w.grad.flatten(), b.grad.flatten(), local.detach().reshape(1)])
    reduce(flat)
    grad_w = flat[:FEATURES].reshape(FEATURES, 1) / GLOBAL_BATCH
    grad_b = flat[FEATURES:FEATURES + 1] / GLOBAL_BATCH
    state["w"] = state["w"] - LR * grad_w
    state["b"] = state["b"] - LR * grad_b
    return flat[-1].item() / GLOBAL_BATCH


def reference(args):
    """The unresized run: the same steps in one process, no torch.distributed."""
    state = init_state()
    with open(args.progress, "w") as out:
        for step in range(1, args.steps + 1):
            loss = train_step(step, state, 0, 1, lambda t: None)
            out.write("step %d loss %.17g world 1\n" % (step, loss))
    write_result(args.result, args.steps, state)


def write_result(path, step, state):
    if path:
        body = {"step": step, "w": state["w"].flatten().tolist(), "b": state["b"].tolist()}
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(body, f)
        os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2000, help="train this many steps, then stop")
    p.add_argument("--stop-file", help="or stop at the first step after this file appears")
    p.add_argument("--step-time", type=float, default=0.05, help="seconds of pretend work a step")
    p.add_argument("--save-every", type=int, default=50, help="checkpoint every N steps")
    p.add_argument("--progress", help="rank 0 appends progress lines here")
    p.add_argument("--result", help="rank 0 writes the final step and parameters here (JSON)")
    p.add_argument("--reference", action="store_true", help="one process, no resizes")
    args = p.parse_args()
    if args.reference:
        reference(args)
        return

    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    progress = open(args.progress, "a", buffering=1) if args.progress and rank == 0 else None

    def say(line):
        if rank == 0:
            print(line, flush=True)
            if progress:
                progress.write("%s world %d at %.3f\n" % (line, world, time.time()))

    def reduce(t, op=dist.ReduceOp.SUM):
        dist.all_reduce(t, op=op)

    ckpt = kairos_ckpt.Checkpointer()
    restored = ckpt.restore()
    step, state = restored if restored else (0, init_state())
    say("restored %d" % step)
    while step < args.steps:
        stop = 1.0 if args.stop_file and rank == 0 and os.path.exists(args.stop_file) else 0.0
        step += 1
        loss = train_step(step, state, rank, world, reduce)
        say("step %d loss %.17g" % (step, loss))
        time.sleep(args.step_time)
        flags = torch.tensor([1.0 if ckpt.due() else 0.0, stop])
        reduce(flags, dist.ReduceOp.MAX)
        if flags[0] > 0 or step % args.save_every == 0:
            asked = ckpt.requested
            ckpt.save(step, state)
            say("saved %d asked %s" % (step, asked))
        if flags[1] > 0:
            break
    if rank == 0:
        write_result(args.result, step, state)
    say("done %d" % step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
