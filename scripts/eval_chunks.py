"""Does evaluating in smaller chunks change a training's measured accuracy on this machine? Prints, per network,
whether the logits of ``--images`` validation images are the same bit for bit when the forward pass takes the
protocol's evaluation batch or ``UNTIMED_CPU_EVAL_CHUNK`` images at a time (the collector evaluates the test set and
the reserve in such chunks), and the CPU seconds of both. Exits 1 if any network differs: then the chunk must not be
used on this machine kind.

    python scripts/eval_chunks.py [--protocol fbnet-fmnist14-full-e4-v1] [--images 2000]

The networks cover every layer shape of the space: for FBNet, each convolutional block in every layer (networks of
one block), for DARTS, random architectures. Weights are freshly initialised: which kernels run depends on the
shapes, not on the values.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from nas_envs.groundtruth.protocols import PROTOCOLS
from nas_envs.groundtruth.train import UNTIMED_CPU_EVAL_CHUNK, build_network
from nas_envs.spaces import get_space
from nas_envs.spaces.fbnet import BLOCKS, NUM_LAYERS, SKIP


def logits(model: torch.nn.Module, x: torch.Tensor, chunk: int) -> tuple[torch.Tensor, float]:
    started = time.process_time()
    with torch.no_grad():
        out = torch.cat([model(x[i : i + chunk].contiguous(memory_format=torch.channels_last))
                         for i in range(0, len(x), chunk)])
    return out, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", default="fbnet-fmnist14-full-e4-v1", choices=sorted(PROTOCOLS))
    parser.add_argument("--images", type=int, default=2000)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as the collector's workers
    protocol = PROTOCOLS[args.protocol]
    x = torch.from_numpy(protocol.splits().val_x[: args.images])
    if protocol.space == "fbnet":
        networks = {BLOCKS[b]: [b] * NUM_LAYERS for b in range(len(BLOCKS)) if b != SKIP}
    else:
        space = get_space(protocol.space)
        networks = {f"random {seed}": list(space.sample(seed=seed)) for seed in range(6)}
    chunks = (protocol.eval_batch_size, min(protocol.eval_batch_size, UNTIMED_CPU_EVAL_CHUNK))
    same_everywhere = True
    seconds = [0.0, 0.0]
    print(f"{args.protocol}: {args.images} images, chunks of {chunks[0]} against {chunks[1]}")
    for seed, (name, genes) in enumerate(networks.items()):
        torch.manual_seed(seed)
        model = build_network(protocol, genes).to(memory_format=torch.channels_last).eval()
        (whole, t_whole), (chunked, t_chunked) = (logits(model, x, chunk) for chunk in chunks)
        same = torch.equal(whole, chunked)
        same_everywhere &= same
        seconds[0] += t_whole
        seconds[1] += t_chunked
        print(f"  {name}: {'same' if same else 'DIFFERENT'} logits, CPU s {t_whole:.2f} / {t_chunked:.2f}")
    print(f"all the same: {same_everywhere}; CPU seconds {seconds[0]:.1f} / {seconds[1]:.1f}")
    sys.exit(0 if same_everywhere else 1)


if __name__ == "__main__":
    main()
