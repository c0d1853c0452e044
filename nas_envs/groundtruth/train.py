"""One real training of one architecture under a fixed, versioned protocol: the unit of ground truth."""

from __future__ import annotations

import math
import platform
import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from nas_envs.catalogue import family, resolve
from nas_envs.groundtruth.protocols import TrainingProtocol

# The evaluations outside the timed part (test set, reserve) run on a CPU in chunks of at most this many images: a
# chunk's activations then stay in cache, about 40 % fewer CPU seconds for full-width FBNet networks, and in eval
# mode an image's logits do not depend on the others in its chunk (measured the same bit for bit: python
# scripts/eval_chunks.py). The timed per-epoch validation keeps the protocol's batch, so that training seconds stay
# comparable across records.
UNTIMED_CPU_EVAL_CHUNK = 250


def build_network(protocol: TrainingProtocol, genes: list[int]) -> nn.Module:
    """The network of ``genes`` under ``protocol``, built by its family's network builder (see the catalogue)."""
    return resolve(family(protocol.space).network)(protocol, genes)


def count_flops(model: nn.Module, input_shape: tuple[int, ...]) -> int:
    """Multiply-accumulate operations of convolutions and linear layers for one input."""
    total = 0

    def conv_hook(module: nn.Conv2d, _inputs: tuple, output: torch.Tensor) -> None:
        nonlocal total
        kh, kw = module.kernel_size
        total += output.numel() * (module.in_channels // module.groups) * kh * kw

    def linear_hook(module: nn.Linear, _inputs: tuple, output: torch.Tensor) -> None:
        nonlocal total
        total += output.numel() * module.in_features

    hooks = []
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            hooks.append(module.register_forward_hook(conv_hook))
        elif isinstance(module, nn.Linear):
            hooks.append(module.register_forward_hook(linear_hook))
    was_training = model.training
    model.eval()
    with torch.no_grad():
        model(torch.zeros(1, *input_shape))
    model.train(was_training)
    for hook in hooks:
        hook.remove()
    return int(total)


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int) -> tuple[float, float]:
    """Accuracy and mean cross-entropy (without label smoothing) on ``(x, y)``."""
    model.eval()
    correct = 0
    loss = 0.0
    with torch.no_grad():
        for start in range(0, len(x), batch_size):
            logits = model(x[start : start + batch_size].contiguous(memory_format=torch.channels_last))
            labels = y[start : start + batch_size]
            correct += int((logits.argmax(1) == labels).sum())
            loss += float(nn.functional.cross_entropy(logits.float(), labels, reduction="sum"))
    model.train()
    return correct / len(x), loss / len(x)


def train(
    protocol: TrainingProtocol,
    genes: list[int],
    seed: int,
    progress: Callable[[int, float], None] | None = None,
    device: str = "cpu",
) -> dict:
    """Train ``genes`` with ``seed`` under ``protocol``; return the measured record (no architecture fields).

    Seeds weight initialisation, data order and augmentation; all random draws happen on the CPU, so a GPU
    (``device="cuda"``) trains the same initial weights on the same batches and differs only in floating-point
    rounding. On the CPU it uses however many threads the caller set (the collector uses one per worker). CPU
    seconds are recorded for CPU trainings only: on a GPU they measure kernel launches, not the training.
    """
    splits = protocol.splits()
    torch.manual_seed(seed)
    model = build_network(protocol, genes)
    input_shape = splits.train_x.shape[1:]
    params = sum(p.numel() for p in model.parameters())
    flops = count_flops(model, input_shape)
    model = model.to(device=device, memory_format=torch.channels_last)

    def tensor(array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(array).to(device)

    train_x, train_y = tensor(splits.train_x), tensor(splits.train_y)
    val_x, val_y = tensor(splits.val_x), tensor(splits.val_y)
    test_x, test_y = tensor(splits.test_x), tensor(splits.test_y)
    steps_per_epoch = math.ceil(len(train_x) / protocol.batch_size)
    optimizer = torch.optim.SGD(
        model.parameters(), lr=protocol.lr, momentum=protocol.momentum, weight_decay=protocol.weight_decay
    )
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=protocol.epochs * steps_per_epoch)
    criterion = nn.CrossEntropyLoss(label_smoothing=protocol.label_smoothing)
    generator = torch.Generator().manual_seed(seed)

    curve: list[float] = []
    loss_curve: list[float] = []  # validation cross-entropy, a candidate second target
    train_loss: list[float] = []
    diverged = False
    start, cpu_start = time.perf_counter(), time.process_time()
    for epoch in range(protocol.epochs):
        order = torch.randperm(len(train_x), generator=generator)
        epoch_loss = 0.0
        for step in range(steps_per_epoch):
            idx = order[step * protocol.batch_size : (step + 1) * protocol.batch_size]
            if protocol.hflip:
                flip = (torch.rand(len(idx), generator=generator) < 0.5).to(device)
            idx = idx.to(device)
            xb = train_x[idx]
            if protocol.hflip:
                xb = torch.where(flip[:, None, None, None], xb.flip(3), xb)
            loss = criterion(model(xb.contiguous(memory_format=torch.channels_last)), train_y[idx])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            epoch_loss += float(loss.detach())
        train_loss.append(epoch_loss / steps_per_epoch)
        diverged = diverged or not math.isfinite(train_loss[-1])
        val_accuracy, val_loss = evaluate(model, val_x, val_y, protocol.eval_batch_size)
        curve.append(val_accuracy)
        loss_curve.append(val_loss)
        if progress is not None:
            progress(epoch, curve[-1])
    train_seconds = time.perf_counter() - start  # training and the per-epoch validation, as NB301's runtime
    # CPU seconds do not grow when other work shares the machine; wall seconds do.
    train_cpu_seconds = time.process_time() - cpu_start
    untimed_batch = (protocol.eval_batch_size if torch.device(device).type != "cpu"
                     else min(protocol.eval_batch_size, UNTIMED_CPU_EVAL_CHUNK))
    test_accuracy, _ = evaluate(model, test_x, test_y, untimed_batch)
    # After the test evaluation and outside the timed part, so that the training and its seconds are unchanged.
    reserve = {}
    if splits.reserve_x is not None and len(splits.reserve_x):
        reserve_accuracy, _ = evaluate(model, tensor(splits.reserve_x), tensor(splits.reserve_y), untimed_batch)
        reserve = {"reserve_accuracy": reserve_accuracy, "reserve_images": len(splits.reserve_x)}
    seconds = {"train_seconds": round(train_seconds, 3)}
    if torch.device(device).type == "cpu":
        seconds["train_cpu_seconds"] = round(train_cpu_seconds, 3)
    return {
        "val_accuracy_curve": curve,
        "val_loss_curve": loss_curve,
        "train_loss_curve": train_loss,
        "val_accuracy": curve[-1],
        "val_loss": loss_curve[-1],
        "test_accuracy": test_accuracy,
        **reserve,
        **seconds,
        "params": int(params),
        "flops": flops,
        "diverged": diverged,
    }


def environment_description(device: str = "cpu") -> dict:
    """Library versions and machine facts stored with each record; ``device`` is where the training ran
    (``"cpu"``, or ``"cuda"`` with the GPU's name), so that seconds are only ever compared on one kind of device."""
    facts = {
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": _cpu_model(),
        "threads": torch.get_num_threads(),
        "device": torch.device(device).type,
    }
    if torch.device(device).type == "cuda":
        facts["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return facts


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
