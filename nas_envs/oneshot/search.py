"""One-shot NAS runs monitored through the benchmark, as NAS-Bench-301 monitors DARTS, PC-DARTS and GDAS.

A run searches a :class:`~nas_envs.oneshot.supernet.Supernet` on the protocol's training images (weights on one half,
architecture on the other, alternating first-order steps), and after every search epoch derives the genotype by the
standard rule (per node the two incoming edges with the strongest operation other than ``none``, per edge that
operation), asks the benchmark what it would score, and appends one JSON line: the genotype, the surrogates'
noise-free means and noise spreads (``xgb``, ``gin``, ``xgb+gin``), the one-shot model's own validation accuracy and
the CPU seconds of the epoch (search, derivation and these evaluations). Lines are appended with one write and an
fsync, the search state (random generators included) is saved atomically after each line, and a rerun resumes from
the last saved state, so a killed run loses at most the epoch in flight and continues as if it had not stopped.

Settings (:class:`SearchSettings`, defaults): 6 search epochs of a 5-cell supernet of 8 initial channels, batch 64,
the DARTS protocol's 10,000 training images split 5,000 / 5,000 (a DARTS run about 30 CPU-minutes, PC-DARTS and
GDAS less: ``python scripts/oneshot_speed.py``); weights: SGD lr 0.025 (cosine), momentum 0.9, weight decay 3e-4;
architecture: Adam lr 3e-4, betas (0.5, 0.999), weight decay 1e-3; GDAS anneals its temperature from 10 to 0.1.
The constrained space (Zela et al. 2020's S-like spaces) mixes only ``skip_connect`` and ``sep_conv_3x3`` (and
``none``).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from nas_envs.files import AppendOnlyWriter, locked, read_json_lines, write_atomically
from nas_envs.oneshot import SEARCH_EPOCHS, run_line_problem
from nas_envs.oneshot.supernet import METHODS, NONE, Supernet
from nas_envs.spaces.darts import GENES_PER_NODE, NUM_NODES, OPS, DartsSpace

SEARCH_SPACES = {"full": (NONE, *OPS), "constrained": (NONE, "skip_connect", "sep_conv_3x3")}


@dataclass(frozen=True)
class SearchSettings:
    method: str = "darts"
    space: str = "full"
    epochs: int = SEARCH_EPOCHS
    seed: int = 0
    protocol: str = "darts-fmnist14-c8l8-e4-v1"
    channels: int = 8
    layers: int = 5
    batch_size: int = 64
    images: int | None = None  # training images used (default: the protocol's); a smaller number for smoke runs
    weight_lr: float = 0.025
    arch_lr: float = 3e-4

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown one-shot method {self.method!r}; allowed: {METHODS}")
        if self.space not in SEARCH_SPACES:
            raise ValueError(f"unknown one-shot space {self.space!r}; allowed: {sorted(SEARCH_SPACES)}")
        if self.epochs < 1:
            raise ValueError(f"epochs must be >= 1, got {self.epochs}")
        if self.images is not None and self.images < 2 * self.batch_size:
            raise ValueError(f"images must be at least two batches ({2 * self.batch_size}: one for the weights, one "
                             f"for the architecture), got {self.images}")


def derive_genes(strengths: np.ndarray, ops: tuple[str, ...]) -> np.ndarray:
    """The 32 canonical genes of the genotype a one-shot model denotes: ``strengths`` ``(2, edges, len(ops))``."""
    space = DartsSpace()
    genes = np.zeros(2 * NUM_NODES * GENES_PER_NODE, dtype=np.int64)
    allowed = [i for i, op in enumerate(ops) if op != NONE]
    for cell in (0, 1):
        edge = 0
        for node in range(NUM_NODES):
            sources = range(2 + node)
            best_op = {s: allowed[int(np.argmax(strengths[cell, edge + s, allowed]))] for s in sources}
            best = sorted(sources, key=lambda s: -strengths[cell, edge + s, best_op[s]])[:2]
            offset = (cell * NUM_NODES + node) * GENES_PER_NODE
            for slot, source in enumerate(sorted(best)):
                genes[offset + 2 * slot] = source
                genes[offset + 2 * slot + 1] = OPS.index(ops[best_op[source]])
            edge += 2 + node
    return space.canonicalize(genes)


def _predictions(genes: np.ndarray) -> dict:
    """The surrogates' noise-free mean and noise std for ``genes``; the search's random state is left as it was
    (loading a model the first time would draw from it)."""
    from nas_envs import make_benchmark

    out = {}
    with torch.random.fork_rng():
        for surrogate in ("xgb", "gin", "xgb+gin"):
            bench = make_benchmark("darts", surrogate=surrogate)
            mean, std = bench.mean_and_noise_std(genes[None])["val_accuracy"]
            out[surrogate] = {"val_accuracy": float(mean[0]), "noise_std": float(std[0])}
    return out


def _accuracy(model: Supernet, x: torch.Tensor, y: torch.Tensor, batch_size: int) -> float:
    model.eval()
    with torch.no_grad():
        correct = sum(int((model(x[i : i + batch_size]).argmax(1) == y[i : i + batch_size]).sum())
                      for i in range(0, len(x), batch_size))
    model.train()
    return correct / len(x)


def run_search(settings: SearchSettings, out: Path) -> list[dict]:
    """Search with ``settings``, appending one line per epoch to ``out`` (``.jsonl``) and keeping the search state
    beside it (``.state.pt``); resumes where a previous run of the same settings stopped. Returns every line."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with locked(out, wait=False):  # one search per file: a second one on it is refused, not interleaved
        return _search(settings, out)


def _search(settings: SearchSettings, out: Path) -> list[dict]:
    from nas_envs.groundtruth.protocols import PROTOCOLS

    state_path = out.with_suffix(".state.pt")
    done = read_json_lines(out, run_line_problem)
    if done and done[0]["settings"] != asdict(settings):
        raise ValueError(f"{out} holds a search of other settings ({done[0]['settings']}); write to another file")
    torch.manual_seed(settings.seed)
    ops = SEARCH_SPACES[settings.space]
    protocol = PROTOCOLS[settings.protocol]
    splits = protocol.splits()
    images = settings.images or len(splits.train_x)
    half = images // 2
    x, y = torch.from_numpy(splits.train_x[:images]), torch.from_numpy(splits.train_y[:images])
    model = Supernet(ops, settings.method, num_classes=protocol.num_classes, channels=settings.channels,
                     layers=settings.layers)
    weights = torch.optim.SGD(model.weight_parameters(), lr=settings.weight_lr, momentum=0.9, weight_decay=3e-4)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(weights, T_max=settings.epochs, eta_min=1e-3)
    architecture = torch.optim.Adam(model.architecture_parameters(), lr=settings.arch_lr, betas=(0.5, 0.999),
                                    weight_decay=1e-3)
    generator = torch.Generator().manual_seed(settings.seed)
    state = torch.load(state_path, weights_only=True) if done and state_path.exists() else None  # no unpickling
    if state is not None:
        model.load_state_dict(state["model"])
        weights.load_state_dict(state["weights"])
        architecture.load_state_dict(state["architecture"])
        schedule.load_state_dict(state["schedule"])
        generator.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])  # GDAS' Gumbel samples
    # the state is the truth: a line written after the last saved state (a kill in between) is dropped and redone
    kept = done[: state["epoch"]] if state is not None else []
    if len(kept) != len(done):
        write_atomically(out, "".join(json.dumps(line) + "\n" for line in kept))
    done = kept
    for epoch in range(len(done), settings.epochs):
        started = time.process_time()
        if settings.method == "gdas":  # anneal 10 -> 0.1 over the search
            model.tau = 10.0 * (0.01 ** (epoch / max(settings.epochs - 1, 1)))
        order_w = torch.randperm(half, generator=generator)
        order_a = half + torch.randperm(images - half, generator=generator)
        for step in range(0, half - settings.batch_size + 1, settings.batch_size):
            va = order_a[step : step + settings.batch_size]
            architecture.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[va]), y[va]).backward()
            architecture.step()
            tr = order_w[step : step + settings.batch_size]
            weights.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[tr]), y[tr]).backward()
            torch.nn.utils.clip_grad_norm_(model.weight_parameters(), 5.0)
            weights.step()
        schedule.step()
        genes = derive_genes(model.edge_strengths().numpy(), ops)
        line = {
            "settings": asdict(settings), "epoch": epoch + 1, "genotype": DartsSpace().to_string(genes),
            "surrogates": _predictions(genes),
            "oneshot_val_accuracy": _accuracy(model, x[half:images], y[half:images], 500),
            "cpu_seconds": round(time.process_time() - started, 2),
        }
        writer = AppendOnlyWriter(out)  # one write and an fsync: a kill leaves the line whole or a partial tail
        try:
            writer.append(line)
        finally:
            writer.close()
        state = {"epoch": epoch + 1, "model": model.state_dict(), "weights": weights.state_dict(),
                 "architecture": architecture.state_dict(), "schedule": schedule.state_dict(),
                 "generator": generator.get_state(), "torch_rng": torch.get_rng_state()}
        write_atomically(state_path, partial(torch.save, state))
        done.append(line)
    return done


def genotypes_to_train(lines: list[dict], every: int = 2) -> list[dict]:
    """The genotypes of a run to train for real: every ``every``-th epoch's and the final one, as rows that
    ``nas-envs collect darts --trajectory FILE`` trains (all of them: the rows name their ``agent``), a file under a
    folder named ``oneshot`` making them the ``oneshot`` source."""
    chosen = [line for line in lines if line["epoch"] % every == 0 or line["epoch"] == len(lines)]
    return [{"agent": f"oneshot-{line['settings']['method']}-{line['settings']['space']}", "seed":
             line["settings"]["seed"], "epoch": line["epoch"], "architecture": line["genotype"]} for line in chosen]
