#!/usr/bin/env bash
# Background ground-truth collection in rounds, so that every kind of record grows together and the mix is right
# at any stop. Round r (from 0) trains, of each stream, the next block of architectures (block r of a stream of k a
# round: indices FROM + k*r .. FROM + k*(r+1) - 1, with FROM the stream's first index):
#   NOISE         held-out noise-subset architectures, 3 seeds each (from NOISE_FROM)
#   REGIONS       "region:count ..." extreme regions of the space, one seed each (from REGION_FROM; FBNet:
#                 param-free, one-block; DARTS: param-free, pool-heavy; "" for none)
#   RANDOM_ARCHS  uniformly random training architectures, one seed each (from RANDOM_FROM)
#   TRAJ          with TRAJECTORY=FILE (a committed trajectory of 'nas-envs run', or a search round's list of
#                 'nas-envs search-round'): architectures an optimiser visited, one seed each (from TRAJ_FROM);
#                 with FINALS_SEEDS=2, a round list's final incumbents get a second seed (the trajectory test)
# NO_RESERVE=1 skips the reserve reading of every stream but the noise subset's (about an eighth of a DARTS
# training's CPU; the measurement-share analysis reads it on the noise subset).
# Before the first round, FIRST="FILE:SEEDS ..." trains every architecture of each committed list ('nas-envs
# incumbents', e.g. an incumbent trajectory for the validity test) with SEEDS seeds.
# WORKERS collector processes run the same rounds and split the jobs between them (lock and claims), one training
# each at a time; the code runs from a snapshot of the committed nas_envs/, so editing the working tree cannot break
# a long collection. Resumable: rerun it and it skips every job already in the file.
# FBNet's collection:
#   PROTOCOL=fbnet-fmnist14-full-e4-v1 NOISE=5 RANDOM_ARCHS=72 REGIONS="param-free:6 one-block:6" \
#     nohup nice -n 10 scripts/collect_rounds.sh fbnet 10 2 &
# A DARTS search round, four of its architectures to one uniform training (a noise-subset architecture's 3 seeds
# and one random architecture):
#   TRAJECTORY=assets/data/trajectories/search/round-00.jsonl TRAJ=16 NOISE=1 NOISE_FROM=110 RANDOM_ARCHS=1 \
#     RANDOM_FROM=600 REGIONS="" NO_RESERVE=1 nohup nice -n 10 scripts/collect_rounds.sh darts 8 2 &
# Usage: [PROTOCOL=P NOISE=8 RANDOM_ARCHS=30 REGIONS="param-free:2" TRAJECTORY=FILE TRAJ=4 FIRST=""
#         NOISE_FROM=0 RANDOM_FROM=0 REGION_FROM=0 TRAJ_FROM=0 FINALS_SEEDS=1] scripts/collect_rounds.sh SPACE [ROUNDS]
#         [WORKERS]
set -euo pipefail
space=${1:?space: darts, fbnet or cityseg}
rounds=${2:-100}
workers=${3:-2}
noise=${NOISE:-8}; random=${RANDOM_ARCHS:-30}; regions=${REGIONS-param-free:2}
trajectory=${TRAJECTORY:-}; traj=${TRAJ:-4}
no_reserve=(); if [[ ${NO_RESERVE:-0} == 1 ]]; then no_reserve=(--no-reserve); fi
protocol=(); if [[ -n ${PROTOCOL:-} ]]; then protocol=(--protocol "$PROTOCOL"); fi
repo=$(cd "$(dirname "$0")/.." && pwd)
snapshot=$(mktemp -d /tmp/nas-envs-collector.XXXXXX)
git -C "$repo" archive HEAD nas_envs | tar -x -C "$snapshot"
export NAS_ENVS_ASSETS=${NAS_ENVS_ASSETS:-$repo/assets} OMP_NUM_THREADS=1
# From inside the snapshot: `python -m` puts the current directory first on sys.path, ahead of PYTHONPATH, so run
# from a checkout it would import the working tree.
collect() { (cd "$snapshot" && PYTHONPATH="$snapshot" python -m nas_envs.cli collect "$space" "${protocol[@]}" --workers 1 "$@"); }
# Block r of a stream of k architectures per round from index FROM: block k r FROM.
block() { echo --start $(($3 + $1 * $2)) --n $(($3 + $1 * ($2 + 1))); }
listed=0
if [[ -n "$trajectory" ]]; then
  listed=$(cd "$snapshot" && PYTHONPATH="$snapshot" python -c "import sys
from nas_envs.groundtruth.jobs import trajectory_architectures
print(len(trajectory_architectures(sys.argv[1])))" "$repo/$trajectory")
fi
rounds_loop() {
  for entry in ${FIRST:-}; do
    local list=$repo/${entry%%:*}
    collect --trajectory "$list" --seeds "${entry##*:}" --n "$(wc -l < "$list")"
  done
  for ((r = 0; r < rounds; r++)); do
    # A trajectory that has no more architectures ends its part of the rounds, not the others.
    if [[ -n "$trajectory" ]]; then
      read -r start n < <(block "$traj" "$r" "${TRAJ_FROM:-0}" | awk '{print $2, $4}')
      ((n > listed)) && n=$listed
      if ((start < n)); then
        collect --trajectory "$repo/$trajectory" --seeds 1 --start "$start" --n "$n" "${no_reserve[@]}" || true
        if ((${FINALS_SEEDS:-1} > 1)); then
          collect --trajectory "$repo/$trajectory" --kind final --seeds "$FINALS_SEEDS" --start "$start" --n "$n" \
            "${no_reserve[@]}" || true
        fi
      fi
    fi
    collect --subset noise --seeds 3 $(block "$noise" "$r" "${NOISE_FROM:-0}")
    for entry in $regions; do
      collect --source "${entry%%:*}" --seeds 1 $(block "${entry##*:}" "$r" "${REGION_FROM:-0}") "${no_reserve[@]}"
    done
    collect --seeds 1 $(block "$random" "$r" "${RANDOM_FROM:-0}") "${no_reserve[@]}"
  done
}
for ((w = 0; w < workers; w++)); do rounds_loop & done
wait
