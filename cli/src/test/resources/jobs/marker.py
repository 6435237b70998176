"""A training step loop that checkpoints, for Kairos' end-to-end tests.

Appends one line per step to $KAIROS_CHECKPOINT_DIR/rank<RANK>.log ("<attempt> <node> <step>
<unix ns>"), and saves the next step to rank<RANK>.ckpt, so a requeued attempt resumes where
the last one stopped. Runs `steps` more steps of 0.1 s and exits 0; when the file `hang` exists
in the checkpoint directory, attempt 1 runs until killed (the node it is on is lost in the test).
"""
import os
import sys
import time

d = os.environ["KAIROS_CHECKPOINT_DIR"]
rank = os.environ["RANK"]
attempt = int(os.environ["KAIROS_ATTEMPT"])
node = os.environ["KAIROS_NODE"]
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
ckpt = os.path.join(d, f"rank{rank}.ckpt")
step = int(open(ckpt).read()) if os.path.exists(ckpt) else 0
hang = attempt == 1 and os.path.exists(os.path.join(d, "hang"))
end = step + steps
with open(os.path.join(d, f"rank{rank}.log"), "a") as log:
    while hang or step < end:
        log.write(f"{attempt} {node} {step} {time.time_ns()}\n")
        log.flush()
        step += 1
        with open(ckpt + ".tmp", "w") as f:
            f.write(str(step))
        os.replace(ckpt + ".tmp", ckpt)
        time.sleep(0.1)
