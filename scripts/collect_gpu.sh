#!/usr/bin/env bash
# Ground truth on one GPU machine for a fixed number of seconds, into separate files under OUT; bring them back and
# append them with 'nas-envs merge OUT/*.jsonl'. Small networks are bound by kernel launches, so several worker
# processes share the GPU; how many, and with how many threads each, is chosen by a probe of real training steps
# at the start of the call (scripts/collect_probe.py, about PROBE_SECONDS plus process start-up).
#
# Each SPACE (fbnet, darts; default fbnet) gets an equal share of the workers, split across its streams:
#   OUT/<space>-noise.jsonl      noise-subset architectures from NOISE_FROM (3 seeds each): the subset that judges
#                                the surrogates, and the scarcest kind of record (a quarter of the share)
#   OUT/<space>-train.jsonl      uniformly random training architectures from TRAIN_FROM (half of the share)
#   OUT/<space>-<region>.jsonl   the space's extreme regions from REGION_FROM (the rest, split between them)
#   OUT/darts-round.jsonl        (darts, with TRAJECTORY=LIST: a search round's list of 'nas-envs search-round')
#                                every architecture of the list, one seed each, with as many workers as the train
#                                stream: a lent GPU trains a search round beside the uniform streams
#   OUT/checks/<protocol>-gpu-check.jsonl   (fbnet) the first noise-subset jobs again: the same jobs as CPU
#                                records, to check that a GPU training is the same measurement; kept apart.
# The start indices lie far above what the CPU collectors reach, so the two never train the same job.
# SMOKE=1 runs the seconds-long smoke protocols instead (numbers that mean nothing), to test the script on a CPU;
# JOBS=K stops each stream after K architectures instead of at the deadline only:
#   SMOKE=1 DEVICE=cpu JOBS=2 scripts/collect_gpu.sh /tmp/burst 600 fbnet darts
# A search round on a GPU: TRAJECTORY=assets/data/trajectories/search/round-01.jsonl scripts/collect_gpu.sh OUT 540 darts
# Usage: [DEVICE=cuda PROBE_SECONDS=20 SMOKE=0 TRAJECTORY=LIST] scripts/collect_gpu.sh OUT SECONDS [SPACE ...]
set -uo pipefail
out=${1:?output folder}
seconds=${2:?seconds to run}
shift 2
spaces=("${@:-fbnet}")
device=${DEVICE:-cuda}
probe_seconds=${PROBE_SECONDS:-20}
deadline=$((SECONDS + seconds))
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/checks"

protocol_of() {
  if [[ ${SMOKE:-0} == 1 ]]; then echo "$1-smoke"; return; fi
  case $1 in
    fbnet) echo fbnet-fmnist14-full-e4-v1 ;;
    darts) echo darts-fmnist14-c8l8-e4-v1 ;;
    *) echo "collect_gpu.sh: unknown space '$1'; allowed: fbnet darts" >&2; exit 2 ;;
  esac
}
regions_of() { case $1 in fbnet) echo "param-free one-block" ;; darts) echo "param-free pool-heavy" ;; esac; }
# Per space: noise, train and region start indices (defaults above the CPU collectors' ranges).
starts_of() {
  case $1 in
    fbnet) echo "${NOISE_FROM:-100} ${TRAIN_FROM:-5000} ${REGION_FROM:-1000}" ;;
    darts) echo "${NOISE_FROM:-200} ${TRAIN_FROM:-4000} ${REGION_FROM:-1000}" ;;
  esac
}

# Every collection stops at the deadline (a stopped collector loses only the trainings in flight).
collect() {
  local space=$1 workers=$2; shift 2
  local left=$((deadline - SECONDS))
  if ((left > 0 && workers > 0)); then
    timeout "$left" python3 -m nas_envs.cli collect "$space" --protocol "$(protocol_of "$space")" --device "$device" \
      --workers "$workers" --threads "$threads" "$@"
  fi
}

read -r workers threads < <(python3 "$here/collect_probe.py" --protocol "$(protocol_of "${spaces[0]}")" \
  --device "$device" --seconds "$probe_seconds") || { echo "collect_gpu.sh: the probe failed" >&2; exit 1; }
echo "collect_gpu.sh: $workers workers x $threads threads (probe), $((deadline - SECONDS)) s left" >&2
share=$((workers / ${#spaces[@]}))
((share >= 1)) || share=1
for space in "${spaces[@]}"; do
  read -r noise_from train_from region_from < <(starts_of "$space")
  regions=($(regions_of "$space"))
  # Every stream gets at least one worker (a small machine runs more processes than the probe chose).
  quarter=$(((share + 3) / 4))
  half=$((share / 2 > 0 ? share / 2 : 1))
  region_workers=$(((share - quarter - half) / ${#regions[@]}))
  ((region_workers >= 1)) || region_workers=1
  if [[ $space == fbnet ]]; then
    checks=$((${JOBS:-4} < 4 ? ${JOBS:-4} : 4))
    collect "$space" 1 --subset noise --n "$checks" --out "$out/checks/$(protocol_of "$space")-gpu-check.jsonl" &
  fi
  collect "$space" "$quarter" --subset noise --start "$noise_from" --n $((noise_from + ${JOBS:-1000})) \
    --out "$out/$space-noise.jsonl" &
  collect "$space" "$half" --start "$train_from" --n $((train_from + ${JOBS:-10000})) --out "$out/$space-train.jsonl" &
  if [[ $space == darts && -n ${TRAJECTORY:-} ]]; then
    listed=$(python3 -c "import sys
from nas_envs.groundtruth.jobs import trajectory_architectures
print(len(trajectory_architectures(sys.argv[1])))" "$TRAJECTORY")
    ((listed > ${JOBS:-$listed})) && listed=${JOBS}
    collect darts "$half" --trajectory "$TRAJECTORY" --n "$listed" --out "$out/darts-round.jsonl" &
  fi
  for region in "${regions[@]}"; do
    collect "$space" "$region_workers" --source "$region" --start "$region_from" --n $((region_from + ${JOBS:-1000})) \
      --out "$out/$space-$region.jsonl" &
  done
done
wait
find "$out" -name '*.jsonl' -exec wc -l {} +  # what each stream wrote
