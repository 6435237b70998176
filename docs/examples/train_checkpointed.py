#!/usr/bin/python3
"""A training loop that checkpoints with Kairos (kairos_ckpt), so a preemption loses nothing.

Submit it with a checkpoint declaration (docs/examples/checkpointed.yaml):

    kairos submit docs/examples/checkpointed.yaml

Each attempt restores the newest complete checkpoint (KAIROS_CHECKPOINT_URL: a directory, or
s3://bucket/prefix with checkpointDir in object storage), trains one step
at a time, and saves when Kairos asks (the checkpoint signal, sent by a preemption) or every
KAIROS_CHECKPOINT_EVERY seconds. With torch (Debian's python3-torch: run /usr/bin/python3) it
fits a small linear model by SGD; without, it counts steps. Every step and save is printed, and
appended to --progress FILE when given, as "attempt A step N loss L" lines.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import kairos_ckpt  # noqa: E402

try:
    import torch
except Exception:  # pragma: no cover
    torch = None


def init_state():
    if torch is None:
        return {"w": 0.0}
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    return {"model": model.state_dict(), "opt": opt.state_dict()}


def make(state):
    if torch is None:
        return None, None
    model = torch.nn.Linear(8, 1)
    model.load_state_dict(state["model"])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    opt.load_state_dict(state["opt"])
    return model, opt


def train_step(step, state, model, opt):
    """One step on batch number ``step`` (deterministic: the same step gives the same batch)."""
    if torch is None:
        state["w"] += 1.0
        return 1.0 / step
    g = torch.Generator().manual_seed(step)
    x = torch.randn(32, 8, generator=g)
    y = x.sum(dim=1, keepdim=True) * 0.5 + 1.0
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    state["model"], state["opt"] = model.state_dict(), opt.state_dict()
    return loss.item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--step-time", type=float, default=0.1, help="seconds of pretend work a step")
    p.add_argument("--progress", help="append progress lines to this file too")
    args = p.parse_args()
    attempt = os.environ.get("KAIROS_ATTEMPT", "1")
    progress = open(args.progress, "a", buffering=1) if args.progress else None

    def say(line):
        print(line, flush=True)
        if progress:
            progress.write(line + "\n")
            progress.flush()

    ckpt = kairos_ckpt.Checkpointer()
    restored = ckpt.restore()
    step, state = restored if restored else (0, init_state())
    say("attempt %s restored %d at %.3f" % (attempt, step, time.time()))
    model, opt = make(state)
    while step < args.steps:
        step += 1
        loss = train_step(step, state, model, opt)
        time.sleep(args.step_time)
        say("attempt %s step %d loss %.6f" % (attempt, step, loss))
        if ckpt.due():
            asked = ckpt.requested
            if asked:
                say("attempt %s asked at %.3f" % (attempt, time.time()))
            t0 = time.time()
            ckpt.save(step, state)
            say("attempt %s saved %d asked %s in %.3f s at %.3f"
                % (attempt, step, asked, time.time() - t0, time.time()))
    say("attempt %s done %d" % (attempt, step))


if __name__ == "__main__":
    main()
