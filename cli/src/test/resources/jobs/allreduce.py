"""Two-process PyTorch all-reduce over gloo, rendezvous from Kairos' environment only.

torch.distributed's env:// init reads MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE. Each rank
contributes rank + 1; every rank must see the sum. Writes the result to
$KAIROS_CHECKPOINT_DIR/allreduce-rank<RANK>.
"""
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="env://")
rank = dist.get_rank()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t, op=dist.ReduceOp.SUM)
world = dist.get_world_size()
out = os.path.join(os.environ["KAIROS_CHECKPOINT_DIR"], f"allreduce-rank{rank}")
with open(out, "w") as f:
    f.write(f"rank={rank} world={world} local_rank={os.environ['LOCAL_RANK']} "
            f"master={os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} sum={t.item()}\n")
dist.destroy_process_group()
