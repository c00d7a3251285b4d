"""The model variants' declarations: one :class:`Variant` a variant, read without torch.

A variant declares itself in one place, a module of this package named after the
model module that computes it (``specs/graph.py`` declares ``parent``, ``gcn``,
``gcn-nogates`` and ``gcn-nolabels``, whose models are in ``models/graph.py``)::

    gcn_nolabels = Variant(
        name="gcn-nolabels",
        summary="direction-only biases (no label information)",
        paper='Choshen & Abend, "-Labels"',
        follows="000 Table 2 caption, §6.3; 003 Table 1 caption, §6.2",
        model="synprep.models.graph:GCNNoLabels",
        target="transitions",
        reads="same as `gcn`",
        options={"gcn": GCNConfig, "prefix": PrefixConfig},
        fixes={"gcn": {"labels": False}},
    )

A variant's settings are ``Config`` dataclasses (:mod:`synprep.settings`) declared in
the same module (or in the module of the family whose settings it shares:
``PrefixConfig`` in ``specs/bidirectional.py``, which specs/graph.py reads too) and named
in ``options`` under their key: the model config (:class:`synprep.models.config.ModelConfig`)
reads ``model.<key>`` for that variant only, strictly, checks it against the trunk's
sizes (the settings' ``check_model``) and stores it with the trunk; the model reads it
as ``cfg.option(PascalConfig)``. Nothing here imports the model config: a declaration
sees the trunk's sizes through :class:`Trunk`.

Every module of this package is found by :func:`declared` (``pkgutil``: no list to
edit) and every :class:`Variant` at its top level is one variant. From these
declarations come the registry (:func:`synprep.registry.get`), the resolution of a
config (:meth:`Variant.resolve`, called by :func:`synprep.models.resolve` at the
edge: ``RunConfig.from_dict``, :func:`synprep.models.model_config`), ``--variant``'s
help, the docs' variant table (tests/test_models.py checks docs/models.md against
:func:`variant_table`) and the workflow's resource request of a training job
(:attr:`Variant.resources`). The model class is imported only when a model is built
(:meth:`Variant.model_class`): the Snakefile resolves every run config when it is
read, by the workflow and by every SLURM job, and importing torch there costs about
2 s each time (tests/test_models.py checks that resolving imports no torch).
docs/architecture.md, "How to add a variant", walks through adding one.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Optional, Protocol

from ...errors import ConfigError

__all__ = ["Variant", "Resources", "Trunk", "declared", "variant", "variant_table", "option_keys", "baseline",
           "every_decoder_layer", "require_layers", "SPECS", "sequence_positions", "USES"]


class Trunk(Protocol):
    """What a declaration reads of a model config: the Transformer's sizes, which its
    nulls are filled from and its settings are checked against (``check_model``). The
    model config (:class:`synprep.models.config.ModelConfig`) is one; this package does
    not import it (the model config reads the declarations)."""

    d_model: int
    n_heads: int
    enc_layers: int
    dec_layers: int


def _nothing(cfg: Trunk) -> dict:
    return {}


#: what a model reads of a dataset's rows (:func:`sequence_positions`): ``train`` (the
#: training loss), ``score`` (the targets, teacher-forced) or ``decode`` (the sources;
#: a search's length budget is clipped to the position table)
USES = ("train", "score", "decode")


def sequence_positions(lengths: Mapping[str, Any], target: str, use: str) -> dict[str, tuple[Any, str]]:
    """The positions a model of the Transformer trunk reads in each row, by sequence:
    ``lengths`` maps a list column (``src_pieces``, ``src_heads``, ``tgt_pieces``,
    ``tgt_transitions``) to each row's length (an array); ``target`` is the column of
    the decoder's sequence. The source: its pieces + EOS; the target (read unless
    ``use`` is ``decode``): the sequence + BOS (the decoder reads BOS + it and predicts
    it + EOS). Returns sequence -> (positions of each row, how they are counted): a
    model's ``max_len`` must hold each (:func:`synprep.train.inputs.check_positions`)."""
    out = {"source": (lengths["src_pieces"] + 1, "its source pieces + EOS")}
    if use != "decode":
        out["target"] = (lengths[target] + 1, f"its target {target.split('_', 1)[1]} + EOS")
    return out


def require_layers(key: str, layers: list[int] | None, count: int, count_name: str) -> None:
    """A layer list setting (1-based; None: not given) refused, naming ``key``, when a layer
    exceeds the model's ``count`` (``count_name``: enc_layers or dec_layers)."""
    if layers is not None and not all(x <= count for x in layers):
        raise ConfigError(f"{key} = {layers}: a layer exceeds {count_name} = {count}")


def every_decoder_layer(cfg: Trunk) -> list[int]:
    """1-based numbers of every decoder layer (what a null layer list means)."""
    return list(range(1, cfg.dec_layers + 1))


@dataclass(frozen=True)
class Resources:
    """What a training job of the variant needs beyond the run's own settings."""

    #: GPUs a training job needs at least; the workflow asks for
    #: max(train.gpus, this). 0: the variant trains on a CPU (every variant today)
    gpus: int = 0
    #: what a training run of the variant costs over the baseline's at the same budget
    #: (updates, preset, batches), as measured: the CPU seconds of the 300-update runs of
    #: the CPU table, mean of 3 seeds over vanilla's 195.7 s
    #: (docs/measured/cpu-table-2026-11-28.json, ``train_cpu_s``). Bidirectional decoders
    #: with their default exact prefixes. The workflow starts the costliest training jobs
    #: first (:func:`synprep.stages.workflow.run_priorities`); 1: the baseline's cost,
    #: declared where a variant costs 1.3x or more
    update_cost: float = 1.0

    def __post_init__(self):
        if not (math.isfinite(self.update_cost) and self.update_cost > 0):
            raise RuntimeError(f"Resources.update_cost = {self.update_cost!r}: give a positive number (1: the baseline's)")


@dataclass(frozen=True)
class Variant:
    """One model variant, declared where a newcomer looks for it (see the module doc)."""

    #: the ``model.variant`` value
    name: str
    #: one line: what the variant changes (the docs' table, ``--help``)
    summary: str
    #: whose model it is (the docs' table)
    paper: str
    #: the paper file and section it follows (../shared/papers/)
    follows: str
    #: "module:Class" of the nn.Module that computes it, imported only to build a model
    model: str
    #: the sequence the decoder generates: target pieces or the transition sequence
    target: Literal["pieces", "transitions"] = "pieces"
    #: what it reads from the shards (the docs' table)
    reads: str = "pieces"
    #: its settings: key -> a ``Config`` dataclass (defaults, bounds) declared in its
    #: module (or its family's), read as ``model.<key>`` for this variant only; one
    #: class a key, each class once (the model asks ``cfg.option(Class)``)
    options: dict[str, type] = field(default_factory=dict)
    #: config values the variant fixes (an ablation's switches), nested like the config
    fixes: dict = field(default_factory=dict)
    #: the values it gives the keys whose null means "the variant's own"
    nulls: Callable[[Trunk], dict] = _nothing
    #: what those nulls mean, in words (the docs)
    nulls_mean: str = ""
    #: it induces latent source trees: its runs dump score matrices (synprep induce-eval)
    induces_trees: bool = False
    #: its decoder gates a syntactic context whose norms can be read (004 Eq. 17)
    gated: bool = False
    #: what a training job needs
    resources: Resources = field(default_factory=Resources)
    #: the baseline every comparison is made against (the table's ``baseline``,
    #: bench/train.py's ratios): one declared variant says so
    baseline: bool = False
    #: the most its training may cost: its time over the baseline's on the same batches
    #: (bench/train.py checks it, with sampled prefixes for a bidirectional decoder);
    #: None: no target
    cost: Optional[float] = None
    #: the positions its model reads in each row, by sequence (:func:`sequence_positions`,
    #: the trunk's; a variant that reads longer sequences gives its own)
    positions: Callable[[Mapping[str, Any], str, str], dict[str, tuple[Any, str]]] = sequence_positions

    def __post_init__(self):
        kinds = list(self.options.values())
        if len(set(kinds)) != len(kinds):
            raise RuntimeError(f"variant {self.name!r} names one settings class under two keys: {self.options}")

    def model_class(self) -> type:
        """The nn.Module class, a ``synprep.models.transformer.Seq2Seq`` (imports torch
        and the model module); a RuntimeError when it decodes another target than the
        declaration says."""
        module, _, name = self.model.partition(":")
        cls = getattr(importlib.import_module(module), name)
        if cls.target != self.target:
            raise RuntimeError(f"variant {self.name!r}: {self.model} decodes {cls.target}, its declaration says {self.target}")
        return cls

    def resolve(self, cfg: Any, given: Optional[dict] = None) -> Any:
        """``cfg`` (a model config of this variant) with the keys left null that mean "the variant's own" filled
        (:attr:`nulls`) and the values the variant fixes set (:attr:`fixes`); a
        ConfigError when ``given`` (the model keys the user wrote) sets a fixed key to
        another value. Resolving a resolved config changes nothing."""
        have = _flat(cfg.to_dict())
        fill = {k: v for k, v in _flat(self.nulls(cfg)).items() if have.get(k) is None}
        if fill:
            cfg = cfg.updated(_unflat(fill))
        if not self.fixes:
            return cfg
        for key, want in _flat(self.fixes).items():
            wrote = _flat(given or {}).get(key, want)
            if wrote != want:
                raise ConfigError(
                    f"model.{key} = {wrote!r} contradicts variant {self.name!r}, which fixes it to {want!r}; "
                    f"remove the key, or choose the variant that has it (e.g. gcn with gcn.gates/gcn.labels)"
                )
        return cfg.updated(self.fixes)

    def unresolved(self, cfg: Any) -> list[str]:
        """The keys of ``cfg`` that :meth:`resolve` would still change (empty: resolved)."""
        have = _flat(cfg.to_dict())
        nulls = [k for k in _flat(self.nulls(cfg)) if have.get(k) is None]
        return nulls + [k for k, v in _flat(self.fixes).items() if have.get(k) != v]


def _flat(d: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _unflat(flat: dict[str, object]) -> dict:
    out: dict = {}
    for key, v in flat.items():
        *parents, last = key.split(".")
        d = out
        for p in parents:
            d = d.setdefault(p, {})
        d[last] = v
    return out


_DECLARED: dict[str, Variant] = {}


def declared() -> dict[str, Variant]:
    """Every declared variant by name, in the order of their modules (alphabetical) and
    of their declarations in a module. A name declared twice is an error."""
    if _DECLARED:
        return _DECLARED
    found: dict[str, Variant] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if not isinstance(obj, Variant):
                continue
            if obj.name in found and found[obj.name] is not obj:
                raise RuntimeError(f"variant {obj.name!r} is declared twice ({module.__name__})")
            found[obj.name] = obj
    _DECLARED.update(found)
    return _DECLARED


def variant(name: str) -> Variant:
    """The declaration of variant ``name``; a ConfigError naming the known ones if none."""
    table = declared()
    if name not in table:
        raise ConfigError(f"unknown variant {name!r}; known: {', '.join(sorted(table))}")
    return table[name]


def option_keys() -> dict[str, type]:
    """Every settings key some variant reads -> its Config class, in the order of
    :func:`declared`: the model config reads another variant's section strictly and
    leaves it out (a preset or a shared run file sets ``gcn``/``prefix`` for every
    variant). A key declared with two classes is an error."""
    out: dict[str, type] = {}
    for v in declared().values():
        for key, kind in v.options.items():
            if out.setdefault(key, kind) is not kind:
                raise RuntimeError(f"model.{key} is declared as {out[key].__name__} and as {kind.__name__} ({v.name})")
    return out


def baseline() -> str:
    """The name of the baseline variant (the declaration with ``baseline=True``)."""
    found = [v.name for v in declared().values() if v.baseline]
    if len(found) != 1:
        raise RuntimeError(f"exactly one variant must be declared the baseline; found {found}")
    return found[0]


def variant_table() -> str:
    """The docs' variant table (docs/models.md, "The variants"), from the declarations."""
    rows = ["| variant | paper | follows | what changes | decodes | reads from the shards |",
            "| --- | --- | --- | --- | --- | --- |"]
    decodes = {"pieces": "target pieces", "transitions": "transitions"}
    for v in declared().values():
        rows.append(f"| `{v.name}` | {v.paper} | {v.follows} | {v.summary} | {decodes[v.target]} | {v.reads} |")
    return "\n".join(rows) + "\n"


def __getattr__(name: str):
    if name == "SPECS":  # the name of the table this package replaced
        return declared()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
