#!/usr/bin/env bash
# On a machine with real NVIDIA GPUs: run a Kairos controller and an agent that DISCOVERS the
# GPUs (no emulation), print what it found, and run jobs that must each see only their own GPU.
#
#   scripts/gpu-check.sh            # uses nvidia-smi on the PATH
#   NVIDIA_SMI=/path/nvidia-smi scripts/gpu-check.sh
#
# Prints: nvidia-smi -L, the agent's discovery (GPUs, UUIDs, NVLink domain size, cgroups), the
# node as the controller sees it, and for each GPU a one-GPU job's view: CUDA_VISIBLE_DEVICES,
# `nvidia-smi -L` inside the job, and (when python3 has torch) torch.cuda.device_count(). Exits
# non-zero when a job saw a GPU other than its own. Note: nvidia-smi reads NVML, which ignores
# CUDA_VISIBLE_DEVICES; it lists only the job's GPU where the agent can deny the other GPUs'
# device files (cgroup v1). CUDA itself (torch) honours CUDA_VISIBLE_DEVICES everywhere.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
smi="${NVIDIA_SMI:-nvidia-smi}"
command -v "$smi" >/dev/null || { echo "gpu-check: $smi not found: this check needs a real NVIDIA GPU" >&2; exit 2; }

echo "== nvidia-smi -L"
"$smi" -L
count="$("$smi" -L | grep -c '^GPU ')"

data="$(mktemp -d)"
port="${KAIROS_GPU_CHECK_PORT:-18777}"
url="http://127.0.0.1:$port"
./kairos server --data "$data/ctl" --listen "127.0.0.1:$port" >"$data/server.log" 2>&1 &
server=$!
agent=""
cleanup() {
  [ -n "$agent" ] && kill "$agent" 2>/dev/null || true
  kill "$server" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 1 240); do [ -s "$data/ctl/join.token" ] && break; sleep 0.5; done
./kairos agent --controller "$url" --join-token-file "$data/ctl/join.token" --node-name gpu-check \
  --data "$data/agent" --nvidia-smi "$smi" >"$data/agent.log" 2>&1 &
agent=$!
k() { local cmd="$1"; shift; KAIROS_DATA="$data/ctl" ./kairos "$cmd" --server "$url" "$@"; }
for _ in $(seq 1 240); do
  k nodes 2>/dev/null | grep -q "gpu-check *UP" && break
  kill -0 "$agent" 2>/dev/null || { echo "gpu-check: the agent stopped:"; cat "$data/agent.log"; exit 1; }
  sleep 0.5
done

echo "== the agent's discovery and isolation"
grep -E "discovered|GPU discovery|cgroup|fence watchdog" "$data/agent.log" || true
echo "== the node, as the controller sees it"
k nodes
k nodes -o json

status=0
python=/usr/bin/python3
[ -x "$python" ] || python=python3
py='try:
    import torch
    print("torch.cuda.device_count() =", torch.cuda.device_count())
except Exception as e:
    print("torch: not available:", type(e).__name__)'
# One one-GPU job per GPU, all at once, so that each gets a different GPU.
pids=()
for i in $(seq 1 "$count"); do
  k submit --gpus 1 --time 5m --wait -- /bin/sh -c \
    "echo CUDA_VISIBLE_DEVICES=\$CUDA_VISIBLE_DEVICES KAIROS_GPUS=\$KAIROS_GPUS; $smi -L; $python -c '$py'; sleep 10" \
    >"$data/submit-$i.txt" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
seen_uuids=()
for i in $(seq 1 "$count"); do
  echo "== one-GPU job $i of $count"
  out="$data/job-$i.txt"
  id="$(grep -oE 'job [0-9]+' "$data/submit-$i.txt" | head -1 | grep -oE '[0-9]+' || true)"
  [ -n "$id" ] && k logs "$id" | tee "$out"
  uuid="$(grep -oE 'CUDA_VISIBLE_DEVICES=[^ ]*' "$out" 2>/dev/null | head -1 | cut -d= -f2)"
  listed="$(grep -c '^GPU ' "$out" 2>/dev/null || true)"
  if [ -z "$uuid" ]; then
    echo "gpu-check: job $i did not run:"; cat "$data/submit-$i.txt"; status=1; continue
  fi
  for other in "${seen_uuids[@]}"; do
    [ "$other" = "$uuid" ] && { echo "gpu-check: two jobs were given $uuid at once"; status=1; }
  done
  seen_uuids+=("$uuid")
  if grep -q "device_count() = " "$out" && ! grep -q "device_count() = 1$" "$out"; then
    echo "gpu-check: job $i: CUDA sees more or fewer than its one GPU"; status=1
  fi
  if [ "$listed" -eq 1 ] && grep -q "$uuid" "$out"; then
    echo "gpu-check: job $i sees only its own GPU ($uuid)"
  elif [ "$listed" -gt 1 ]; then
    echo "gpu-check: job $i was given $uuid; nvidia-smi -L inside it lists $listed GPUs (NVML ignores CUDA_VISIBLE_DEVICES; the device files are not isolated on this host)"
    status=1
  else
    echo "gpu-check: job $i was given $uuid but nvidia-smi -L inside it shows another GPU"; status=1
  fi
done
echo "== gpu-check: $([ $status -eq 0 ] && echo ok || echo FAILED)"
exit $status
