#!/bin/sh
# One node's task of an elastic job: a torchrun elastic agent (docs/concepts.md, "Elastic jobs").
# Kairos gives every task the sizes and the rendezvous:
#   KAIROS_NNODES_MIN, KAIROS_NNODES_MAX  the node range (torchrun's --nnodes=MIN:MAX)
#   KAIROS_NPROC_PER_NODE                 workers per node
#   KAIROS_RDZV_ENDPOINT                  host:port of the c10d rendezvous, on the job's first node
#   NODE_RANK                             0 on that first node, which never leaves
# Usage: torchrun_elastic.sh SCRIPT [ARGS...]   (from the job's command)
# (torchrun 1.13 spells its options with underscores; later versions take both spellings.)
set -eu
# The checkpoint signal (USR1) reaches every process of the task; the workers' checkpoint helper
# handles it, and torchrun itself must not die of it.
trap '' USR1
# The first node's agent serves the rendezvous store; the others only connect to it (torchrun
# would guess from the address, which fails when several nodes share a host).
if [ "$NODE_RANK" = 0 ]; then host=1; else host=0; fi
# --redirects/--tee: torch 1.13 under Python 3.11 cannot parse their default (0); 2 = stderr also to
# a file, and it still reaches the task's log.
exec /usr/bin/python3 -m torch.distributed.run \
    --nnodes="$KAIROS_NNODES_MIN:$KAIROS_NNODES_MAX" \
    --nproc_per_node="$KAIROS_NPROC_PER_NODE" \
    --rdzv_backend=c10d --rdzv_endpoint="$KAIROS_RDZV_ENDPOINT" --rdzv_id="$KAIROS_JOB_ID" \
    --rdzv_conf="is_host=$host,last_call_timeout=1" \
    --max_restarts=100 --monitor_interval=1 --redirects=2 --tee=2 \
    "$@"
