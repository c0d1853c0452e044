"""The CitySeg search space of EvoXBench's MOSegNAS problems (Tian et al., 2024): an elastic bottleneck network.

24 integer genes, as EvoXBench implements them (the paper says 32; we follow the implementation so that its
users' encodings carry over):

- 5 depths: the head (0..2) and the four stages (0..2, 0..2, 0..3, 0..2). Stage ``s`` has ``1 + depth`` blocks
  (at most 3, 3, 4, 3). A head depth of 0 is *degenerate*: EvoXBench sets its costs to the nadir point; the
  environments mask it and :meth:`CitySegSpace.sample` never draws it.
- 13 expand ratios, one per block slot (3, 3, 4, 3 slots per stage), each 0.2, 0.25 or 0.35: a block's bottleneck
  width is its output width times the ratio. Slots beyond a stage's depth are inactive; the canonical form sets
  them to 0, so that gene vectors of the same network compare (and are scored) equal. EvoXBench feeds inactive
  slots to its predictor, which makes identical networks score differently.
- 6 widths, each a multiplier 0.65, 0.8 or 1.0: two for the head (its inner and output convolutions) and one per
  stage.

The one-hot encoding is 73 wide (3 + 3 + 3 + 4 + 3 depth choices, 13 x 3 expand choices, 6 x 3 width choices), the
input width of EvoXBench's rank-net. The decision order of the environments is the gene order: depths first, so
that the masks know which expand slots are active.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

import numpy as np

from nas_envs.spaces.base import Hyperparameter, InvalidArchitectureError, SearchSpace

EXPAND_RATIOS: tuple[float, ...] = (0.2, 0.25, 0.35)
WIDTH_MULTIPLIERS: tuple[float, ...] = (0.65, 0.8, 1.0)
DEPTH_CHOICES: tuple[int, ...] = (3, 3, 3, 4, 3)  # head, stage 1..4
STAGE_MAX_BLOCKS: tuple[int, ...] = (3, 3, 4, 3)
NUM_STAGES = len(STAGE_MAX_BLOCKS)
NUM_DEPTHS = len(DEPTH_CHOICES)
NUM_EXPANDS = sum(STAGE_MAX_BLOCKS)
NUM_WIDTHS = 2 + NUM_STAGES
NUM_GENES = NUM_DEPTHS + NUM_EXPANDS + NUM_WIDTHS
CHOICES = np.array(DEPTH_CHOICES + (len(EXPAND_RATIOS),) * NUM_EXPANDS + (len(WIDTH_MULTIPLIERS),) * NUM_WIDTHS)
ONE_HOT_OFFSETS = np.concatenate([[0], np.cumsum(CHOICES)[:-1]])
EXPAND_START = NUM_DEPTHS
WIDTH_START = NUM_DEPTHS + NUM_EXPANDS
# the parts a network's latency is tabulated by (nas_envs.groundtruth.cityseg_hardware)
NETWORK_PARTS: tuple[str, ...] = ("head",) + tuple(f"stage{s + 1}" for s in range(NUM_STAGES)) + ("decoder",)
# expand slot -> (stage, position of the block inside its stage)
SLOT_STAGE = np.repeat(np.arange(NUM_STAGES), STAGE_MAX_BLOCKS)
SLOT_POSITION = np.concatenate([np.arange(n) for n in STAGE_MAX_BLOCKS])


def gene_name(index: int) -> str:
    """A readable name of gene ``index`` for error messages."""
    if index == 0:
        return "head depth"
    if index < NUM_DEPTHS:
        return f"stage {index} depth"
    if index < WIDTH_START:
        slot = index - EXPAND_START
        return f"stage {SLOT_STAGE[slot] + 1} block {SLOT_POSITION[slot] + 1} expand ratio"
    width = index - WIDTH_START
    return f"head width {width + 1}" if width < 2 else f"stage {width - 1} width"


def active_slots(archs: np.ndarray) -> np.ndarray:
    """Boolean ``(N, 13)``: which expand slots hold a block (the first ``1 + depth`` of each stage)."""
    archs = np.asarray(archs).reshape(-1, NUM_GENES)
    stage_depths = archs[:, 1:NUM_DEPTHS]
    return SLOT_POSITION[None, :] <= stage_depths[:, SLOT_STAGE]


# the configuration view's name of each gene
_CONFIGURATION_NAMES: tuple[str, ...] = (
    "depth_head", *(f"depth_stage{s + 1}" for s in range(NUM_STAGES)),
    *(f"expand_stage{SLOT_STAGE[slot] + 1}_block{SLOT_POSITION[slot] + 1}" for slot in range(NUM_EXPANDS)),
    "width_head_inner", "width_head_output", *(f"width_stage{s + 1}" for s in range(NUM_STAGES)),
)

_PRINTED = re.compile(r"CitySeg\(d=\[([\d, ]*)\], e=\[([\d., ]*)\], w=\[([\d, ]*)\]\)")
_EXPAND_CODES = {str(value): code for code, value in enumerate(EXPAND_RATIOS)}

class CitySegSpace(SearchSpace):
    """24 decisions with up to 4 choices each; masks keep head depth >= 1 and inactive expand slots at 0."""

    name = "cityseg"
    num_decisions = NUM_GENES
    num_actions = int(CHOICES.max())
    one_hot_width = int(CHOICES.sum())

    # --- sequential decisions -------------------------------------------------------------------------------
    def action_mask(self, prefix: np.ndarray) -> np.ndarray:
        step = len(prefix)
        if not 0 <= step < NUM_GENES:
            raise ValueError(f"cityseg: decision index must be in [0, {NUM_GENES}), got {step}")
        mask = np.zeros(self.num_actions, dtype=np.int8)
        mask[: CHOICES[step]] = 1
        if step == 0:
            mask[0] = 0  # degenerate head
        elif EXPAND_START <= step < WIDTH_START:
            slot = step - EXPAND_START
            if SLOT_POSITION[slot] > prefix[1 + SLOT_STAGE[slot]]:
                mask[1:] = 0  # inactive slot: only the canonical 0
        return mask

    def action_masks(self, genes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        genes = np.asarray(genes, dtype=np.int64).reshape(-1, NUM_GENES)
        steps = np.asarray(steps, dtype=np.int64)
        capped = np.minimum(steps, NUM_GENES - 1)
        masks = (np.arange(self.num_actions)[None, :] < CHOICES[capped][:, None]).astype(np.int8)
        masks[steps == 0, 0] = 0
        slot = capped - EXPAND_START
        is_expand = (slot >= 0) & (slot < NUM_EXPANDS)
        slot = np.clip(slot, 0, NUM_EXPANDS - 1)
        depth = genes[np.arange(len(genes)), 1 + SLOT_STAGE[slot]]
        masks[is_expand & (SLOT_POSITION[slot] > depth), 1:] = 0
        return masks

    # --- validity and canonical form ------------------------------------------------------------------------
    def validate(self, genes: np.ndarray) -> None:
        genes = np.asarray(genes)
        if genes.shape != (NUM_GENES,):
            raise InvalidArchitectureError(f"cityseg: expected {NUM_GENES} genes, got shape {genes.shape}")
        bad = np.flatnonzero((genes < 0) | (genes >= CHOICES))
        if len(bad):
            index = int(bad[0])
            raise InvalidArchitectureError(
                f"cityseg: gene {index} ({gene_name(index)}) is {int(genes[index])}; allowed 0..{CHOICES[index] - 1}"
            )

    def gene_upper_bounds(self) -> np.ndarray:
        return CHOICES - 1

    def invalid_rows(self, archs: np.ndarray) -> np.ndarray:
        return ((archs < 0) | (archs >= CHOICES[None, :])).any(axis=1)

    def degenerate_rows(self, archs: np.ndarray) -> np.ndarray:
        """Rows with head depth 0 (valid genes, but EvoXBench scores them at the nadir point)."""
        return np.asarray(archs).reshape(-1, NUM_GENES)[:, 0] == 0

    def canonicalize(self, genes: np.ndarray) -> np.ndarray:
        out = np.array(genes, dtype=np.int64, copy=True)
        batch = out.reshape(-1, NUM_GENES)
        batch[:, EXPAND_START:WIDTH_START][~active_slots(batch)] = 0
        return out

    # --- sampling and neighbourhoods ------------------------------------------------------------------------
    def _sample_one(self, rng: np.random.Generator) -> np.ndarray:
        genes = np.array([rng.integers(n) for n in CHOICES], dtype=np.int64)
        genes[0] = rng.integers(1, CHOICES[0])
        return self.canonicalize(genes)

    def neighbours(self, genes: np.ndarray) -> list[np.ndarray]:
        """Every non-degenerate canonical network one gene change away (inactive slots are not genes of it)."""
        genes = self.canonicalize(genes)
        active = active_slots(genes)[0]
        result = []
        for index in range(NUM_GENES):
            if EXPAND_START <= index < WIDTH_START and not active[index - EXPAND_START]:
                continue
            for value in range(1 if index == 0 else 0, CHOICES[index]):
                if value != genes[index]:
                    changed = genes.copy()
                    changed[index] = value
                    result.append(self.canonicalize(changed))
        return result

    # --- the configuration view -----------------------------------------------------------------------------
    def hyperparameters(self) -> list[Hyperparameter]:
        """Per gene: ``depth_head`` (1 or 2: depth 0 is degenerate, as in the environments' masks) and
        ``depth_stage<s>`` (a stage holds ``1 + depth`` blocks); ``expand_stage<s>_block<b>`` (the expand ratio of
        a block, active when its stage holds it); ``width_head_inner``, ``width_head_output``, ``width_stage<s>``
        (width multipliers)."""
        out = [Hyperparameter(_CONFIGURATION_NAMES[0], tuple(range(1, DEPTH_CHOICES[0])))]
        out += [Hyperparameter(_CONFIGURATION_NAMES[g], tuple(range(DEPTH_CHOICES[g]))) for g in range(1, NUM_DEPTHS)]
        for slot in range(NUM_EXPANDS):
            stage_depth = _CONFIGURATION_NAMES[1 + SLOT_STAGE[slot]]
            holding = tuple(range(int(SLOT_POSITION[slot]), DEPTH_CHOICES[1 + SLOT_STAGE[slot]]))
            out.append(Hyperparameter(_CONFIGURATION_NAMES[EXPAND_START + slot], EXPAND_RATIOS,
                                      *((stage_depth, holding) if SLOT_POSITION[slot] else ())))
        out += [Hyperparameter(_CONFIGURATION_NAMES[g], WIDTH_MULTIPLIERS) for g in range(WIDTH_START, NUM_GENES)]
        return out

    def values_from_genes(self, genes: np.ndarray) -> dict[str, object]:
        genes = self.as_genes(genes)  # shape, integers, validity and canonical form, named
        if genes[0] == 0:
            raise InvalidArchitectureError("cityseg: head depth 0 is degenerate and not part of the configuration "
                                           "view (depth_head is 1 or 2)")
        active = active_slots(genes)[0]
        values: dict[str, object] = {_CONFIGURATION_NAMES[g]: int(genes[g]) for g in range(NUM_DEPTHS)}
        values.update({_CONFIGURATION_NAMES[EXPAND_START + slot]: EXPAND_RATIOS[int(genes[EXPAND_START + slot])]
                       for slot in range(NUM_EXPANDS) if active[slot]})
        values.update({_CONFIGURATION_NAMES[g]: WIDTH_MULTIPLIERS[int(genes[g])]
                       for g in range(WIDTH_START, NUM_GENES)})
        return values

    def genes_from_values(self, values: Mapping[str, object]) -> np.ndarray:
        values = self._check_names(values)
        choices = {h.name: h.choices for h in self.hyperparameters()}
        genes = np.zeros(NUM_GENES, dtype=np.int64)
        for g in range(NUM_DEPTHS):
            name = _CONFIGURATION_NAMES[g]
            if values.get(name) not in choices[name] or isinstance(values.get(name), bool):
                raise InvalidArchitectureError(f"cityseg: {name} must be one of {choices[name]}, got "
                                               f"{values.get(name)!r}")
            genes[g] = int(values[name])
        active = active_slots(genes)[0]
        for slot in range(NUM_EXPANDS):
            name = _CONFIGURATION_NAMES[EXPAND_START + slot]
            if not active[slot]:
                if name in values:
                    raise InvalidArchitectureError(f"cityseg: {name} set although its stage holds no such block")
                continue
            if values.get(name) not in EXPAND_RATIOS:
                raise InvalidArchitectureError(f"cityseg: {name} must be one of {EXPAND_RATIOS}, got "
                                               f"{values.get(name)!r}")
            genes[EXPAND_START + slot] = EXPAND_RATIOS.index(values[name])
        for g in range(WIDTH_START, NUM_GENES):
            name = _CONFIGURATION_NAMES[g]
            if values.get(name) not in WIDTH_MULTIPLIERS:
                raise InvalidArchitectureError(f"cityseg: {name} must be one of {WIDTH_MULTIPLIERS}, got "
                                               f"{values.get(name)!r}")
            genes[g] = WIDTH_MULTIPLIERS.index(values[name])
        return genes

    # --- strings --------------------------------------------------------------------------------------------
    def to_string(self, genes: np.ndarray) -> str:
        """``CitySeg(d=[...], e=[...], w=[...])``: depth and width choices as indices, expand ratios as values
        (EvoXBench's subnet dictionary, with all 5 depths and 6 widths)."""
        genes = np.asarray(genes, dtype=np.int64)
        depths = genes[:NUM_DEPTHS].tolist()
        expands = [EXPAND_RATIOS[int(g)] for g in genes[EXPAND_START:WIDTH_START]]
        widths = genes[WIDTH_START:].tolist()
        return f"CitySeg(d={depths}, e={expands}, w={widths})"

    def parse_printed(self, text: str) -> list[int] | None:
        match = _PRINTED.fullmatch(text)
        if match is None:
            return None
        depths, expands, widths = (part.split(", ") if part else [] for part in match.groups())
        codes = [_EXPAND_CODES.get(value) for value in expands]
        if len(depths) != NUM_DEPTHS or len(codes) != NUM_EXPANDS or len(widths) != NUM_WIDTHS or None in codes:
            return None
        return [int(d) for d in depths] + codes + [int(w) for w in widths]

    def from_string(self, text: str) -> np.ndarray:
        """Parse ``CitySeg(d=[...], e=[...], w=[...])`` or a dictionary ``{'d': [...], 'e': [...], 'w': [...]}``;
        expand ratios may be given as values (0.2, 0.25, 0.35) or as indices (0, 1, 2)."""
        if not isinstance(text, str):
            raise InvalidArchitectureError(f"cityseg: a string is required, got {type(text).__name__}")
        fields = _parse_fields(text)
        parts = []
        for key, count in (("d", NUM_DEPTHS), ("e", NUM_EXPANDS), ("w", NUM_WIDTHS)):
            values = fields.get(key)
            if not isinstance(values, (list, tuple)) or len(values) != count:
                raise InvalidArchitectureError(f"cityseg: {key!r} must be a list of {count} values, got {values!r}")
            parts.append([_expand_index(v) for v in values] if key == "e" else list(values))
        flat = [v for part in parts for v in part]
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in flat):
            raise InvalidArchitectureError(f"cityseg: depth and width choices must be integers: {text[:120]!r}")
        genes = np.array(flat, dtype=np.int64)
        self.validate(genes)
        return self.canonicalize(genes)

    # --- encodings ------------------------------------------------------------------------------------------
    def one_hot(self, archs: np.ndarray) -> np.ndarray:
        archs = np.asarray(archs, dtype=np.int64).reshape(-1, NUM_GENES)
        out = np.zeros((len(archs), self.one_hot_width), dtype=np.float32)
        out[np.arange(len(archs))[:, None], ONE_HOT_OFFSETS[None, :] + archs] = 1.0
        return out

    def features(self, archs: np.ndarray, cost_features: np.ndarray | None = None, version: int | None = None
                 ) -> np.ndarray:
        """One-hot (73) plus blocks per stage, mean active expand ratio per stage and the six width multipliers."""
        self.feature_version(version)
        archs = np.asarray(archs, dtype=np.int64).reshape(-1, NUM_GENES)
        active = active_slots(archs)
        ratios = np.asarray(EXPAND_RATIOS)[archs[:, EXPAND_START:WIDTH_START]] * active
        per_stage = np.zeros((NUM_STAGES, NUM_EXPANDS))
        per_stage[SLOT_STAGE, np.arange(NUM_EXPANDS)] = 1.0
        blocks = active @ per_stage.T
        mean_ratio = (ratios @ per_stage.T) / blocks
        widths = np.asarray(WIDTH_MULTIPLIERS)[archs[:, WIDTH_START:]]
        return np.hstack([self.one_hot(archs), blocks, mean_ratio, widths]).astype(np.float32)

    def cost_features(self, archs: np.ndarray) -> np.ndarray:
        """Indicators on which params and FLOPs of the CitySeg network are exactly linear.

        Per stage: the configuration of its first block (input width x own width x expand ratio: 27, the
        block that changes the channel count) and the count of its other blocks per (own width, expand ratio)
        (9). Head: its inner width (3), the count of inner convolutions per inner width (3), inner x output
        width (9). Decoder: each stage's width (4 x 3). 168 columns in all.
        """
        archs = np.asarray(archs, dtype=np.int64).reshape(-1, NUM_GENES)
        n, w = len(archs), len(WIDTH_MULTIPLIERS)
        e = len(EXPAND_RATIOS)
        rows = np.arange(n)
        head_inner, head_out = archs[:, WIDTH_START], archs[:, WIDTH_START + 1]
        stage_widths = archs[:, WIDTH_START + 2 :]
        columns = [
            _indicator(head_inner, w),
            _indicator(head_inner, w) * archs[:, :1],  # head depth = number of inner convolutions
            _indicator(head_inner * w + head_out, w * w),
        ]
        active = active_slots(archs)
        expands = archs[:, EXPAND_START:WIDTH_START]
        input_width = head_out
        for stage in range(NUM_STAGES):
            slots = np.flatnonzero(SLOT_STAGE == stage)
            own = stage_widths[:, stage]
            first = (input_width * w + own) * e + expands[:, slots[0]]
            columns.append(_indicator(first, w * w * e))
            # the stage's later active blocks counted per (own width, expand ratio): one bincount over all rows
            later = (rows[:, None] * w + own[:, None]) * e + expands[:, slots[1:]]
            columns.append(np.bincount(later.reshape(-1), weights=active[:, slots[1:]].reshape(-1),
                                       minlength=n * w * e).reshape(n, w * e))
            input_width = own
        columns += [_indicator(stage_widths[:, stage], w) for stage in range(NUM_STAGES)]
        return np.hstack(columns)


def _indicator(values: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros((len(values), size))
    out[np.arange(len(values)), values] = 1.0
    return out


def _expand_index(value: object) -> object:
    """An expand ratio given as a value (0.25) or an index (1) -> its index; anything else is returned as is."""
    if isinstance(value, float):
        matches = [i for i, ratio in enumerate(EXPAND_RATIOS) if abs(ratio - value) < 1e-9]
        if not matches:
            raise InvalidArchitectureError(f"cityseg: expand ratio {value} is not one of {EXPAND_RATIOS}")
        return matches[0]
    return value


def _parse_fields(text: str) -> dict:
    body = text.strip()
    try:
        if body.startswith("CitySeg(") and body.endswith(")"):
            call = ast.parse(body, mode="eval").body
            if not isinstance(call, ast.Call) or call.args:
                raise ValueError
            return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
        fields = ast.literal_eval(body)
    except (ValueError, SyntaxError):
        raise InvalidArchitectureError(
            f"cityseg: expected 'CitySeg(d=[...], e=[...], w=[...])' or a dict with 'd', 'e', 'w': {text[:120]!r}"
        ) from None
    if not isinstance(fields, dict):
        raise InvalidArchitectureError(f"cityseg: expected a dict with keys 'd', 'e', 'w', got {type(fields).__name__}")
    return fields
