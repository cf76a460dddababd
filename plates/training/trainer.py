"""Training STN and LPRNet together with CTC: epochs over real and synthetic crops, a validation report after each
(the share of plates read exactly, and the characters confused), checkpoints that a stopped run resumes from.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from plates.nets import LPRNet, SpatialTransformer
from plates.recognition.rows import join_rows, read_joined, split_rows
from plates.training.dataset import CropSet, encode, to_tensor, widened


@dataclass(frozen=True)
class TrainSettings:
    epochs: int = 5
    batch_size: int = 128
    lr: float = 5e-4  # LPRNet's peak learning rate (AdamW); the STN takes a tenth
    weight_decay: float = 1e-4
    warmup_steps: int = 100
    synthetic_per_epoch: int = 18000  # drawn in turn from the synthetic set, so each epoch sees new ones
    real_per_epoch: int = 0  # likewise from the real crops; 0: all of them every epoch
    seed: int = 0


@dataclass
class Validation:
    name: str
    plates: int
    exact: int
    confusions: Counter = field(default_factory=Counter)  # (true char, read char) -> count

    @property
    def accuracy(self) -> float:
        return self.exact / max(self.plates, 1)

    def summary(self, top: int = 6) -> str:
        confused = ", ".join(f"{a}->{b} {n}" for (a, b), n in self.confusions.most_common(top))
        return f"{self.name}: {self.exact}/{self.plates} = {self.accuracy:.3f}" + (
            f"; confused {confused}" if confused else ""
        )


def recognizer_logits(
    stn: nn.Module, lprnet: nn.Module, images: np.ndarray, lines: np.ndarray
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each crop's logits, [N, classes, frames], its rows (`lines` of 94x24 apart in it) read on as one text; and
    each crop's frame count."""
    return join_rows(lprnet(stn(split_rows(to_tensor(images), lines))), lines)


def read_texts(
    stn: nn.Module, lprnet: nn.Module, images: np.ndarray, lines: np.ndarray | None = None, batch_size: int = 256
) -> list[str]:
    """The constrained decoder's reading of each crop, "" where it finds no plate."""
    stn.eval(), lprnet.eval()
    lines = np.ones(len(images), np.int64) if lines is None else lines
    texts = []
    with torch.inference_mode():
        for start in range(0, len(images), batch_size):
            part = slice(start, start + batch_size)
            logits, frames = recognizer_logits(stn, lprnet, images[part], lines[part])
            texts += [reading.text for reading in read_joined(logits.numpy(), frames.numpy(), lines[part])]
    return texts


def validate(name: str, stn: nn.Module, lprnet: nn.Module, data: CropSet) -> Validation:
    result = Validation(name, len(data), 0)
    for truth, read in zip(data.texts, read_texts(stn, lprnet, data.images, data.lines)):
        result.exact += truth == read
        if truth != read and len(truth) == len(read):  # same length: the characters line up
            result.confusions.update((a, b) for a, b in zip(truth, read) if a != b)
    return result


def _learning_rate(step: int, total: int, settings: TrainSettings) -> float:
    """Linear warm-up, then cosine decay to 2 % of the peak."""
    if step < settings.warmup_steps:
        return (step + 1) / settings.warmup_steps
    progress = (step - settings.warmup_steps) / max(1, total - settings.warmup_steps)
    return 0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))


def load_checkpoint(path: Path) -> tuple[nn.Module, nn.Module]:
    """The STN and LPRNet of a checkpoint `train` wrote (last.pt, best.pt), in eval mode."""
    state = torch.load(path, map_location="cpu", weights_only=False)
    stn, lprnet = SpatialTransformer(), LPRNet(**state.get("architecture", {}))
    stn.load_state_dict(state["stn"]), lprnet.load_state_dict(state["lprnet"])
    return stn.eval(), lprnet.eval()


def _turn(epoch: int, count: int, size: int) -> np.ndarray:
    """The rows of a set of `size` that epoch `epoch` takes `count` of: the next ones after the last epoch's."""
    return (epoch * count + np.arange(count)) % max(size, 1)


def train(
    stn: nn.Module,
    lprnet: nn.Module,
    real: CropSet,
    synthetic: CropSet,
    validations: dict[str, CropSet],
    out_dir: Path,
    settings: TrainSettings = TrainSettings(),
    log: Callable[[str], None] = print,
) -> list[dict]:
    """Train both networks in place; after each epoch, validate, write `last.pt` (everything a resumed run needs)
    and `best.pt` (the networks of the epoch with the best first validation set). Resumes from `last.pt`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(settings.seed)
    parameters = [
        {"params": lprnet.parameters(), "lr": settings.lr},
        {"params": stn.parameters(), "lr": settings.lr / 10},
    ]
    optimizer = torch.optim.AdamW(parameters, weight_decay=settings.weight_decay)
    real_per_epoch = settings.real_per_epoch or len(real)
    per_epoch = real_per_epoch + settings.synthetic_per_epoch
    steps_per_epoch = math.ceil(per_epoch / settings.batch_size)
    total = steps_per_epoch * settings.epochs
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: _learning_rate(step, total, settings))
    ctc = nn.CTCLoss(blank=lprnet.num_classes - 1, zero_infinity=True)
    history: list[dict] = []
    start_epoch, best = 0, -1.0
    last = out_dir / "last.pt"
    if last.is_file():
        state = torch.load(last, map_location="cpu", weights_only=False)
        stn.load_state_dict(state["stn"]), lprnet.load_state_dict(state["lprnet"])
        optimizer.load_state_dict(state["optimizer"]), scheduler.load_state_dict(state["scheduler"])
        start_epoch, best, history = state["epoch"], state["best"], state["history"]
        torch.set_rng_state(state["torch_rng"])
        log(f"resumed from {last} after epoch {start_epoch}")
    for epoch in range(start_epoch, settings.epochs):
        rng = np.random.default_rng([settings.seed, epoch])
        synthetic_part = _turn(epoch, settings.synthetic_per_epoch, len(synthetic))
        real_part = _turn(epoch, real_per_epoch, len(real))
        order = rng.permutation(per_epoch)
        stn.train(), lprnet.train()
        started, losses = time.monotonic(), []
        bar = tqdm(range(steps_per_epoch), desc=f"epoch {epoch + 1}/{settings.epochs}", unit="batch", mininterval=10)
        for step in bar:
            chosen = order[step * settings.batch_size : (step + 1) * settings.batch_size]
            real_rows = real_part[chosen[chosen < real_per_epoch]]
            synthetic_rows = synthetic_part[chosen[chosen >= real_per_epoch] - real_per_epoch]
            real_images, real_texts, real_lines = real.take(real_rows)
            synthetic_images, synthetic_texts, synthetic_lines = synthetic.take(synthetic_rows)
            images = widened(np.concatenate, [real_images, synthetic_images])
            logits, frames = recognizer_logits(stn, lprnet, images, np.concatenate([real_lines, synthetic_lines]))
            targets, lengths = encode(real_texts + synthetic_texts)
            loss = ctc(logits.permute(2, 0, 1).log_softmax(2), targets, frames, lengths)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}", refresh=False)
        results = [validate(name, stn, lprnet, data) for name, data in validations.items()]
        record = {
            "epoch": epoch + 1,
            "loss": float(np.mean(losses)),
            "minutes": (time.monotonic() - started) / 60,
            **{r.name: r.accuracy for r in results},
        }
        history.append(record)
        log(
            f"epoch {epoch + 1}: loss {record['loss']:.3f}, {record['minutes']:.1f} min; "
            + " | ".join(r.summary() for r in results)
        )
        score = results[0].accuracy if results else -epoch
        if score >= best:
            best = score
            torch.save(
                {
                    "stn": stn.state_dict(),
                    "lprnet": lprnet.state_dict(),
                    "architecture": lprnet.architecture,
                    "epoch": epoch + 1,
                    "validation": record,
                    "settings": asdict(settings),
                },
                out_dir / "best.pt",
            )
        torch.save(
            {
                "stn": stn.state_dict(),
                "lprnet": lprnet.state_dict(),
                "architecture": lprnet.architecture,
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "epoch": epoch + 1,
                "best": best,
                "history": history,
                "torch_rng": torch.get_rng_state(),
            },
            last,
        )
    return history
