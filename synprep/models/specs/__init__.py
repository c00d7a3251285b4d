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

A variant with settings of its own declares their ``Config`` dataclass in the same
module and names it in ``options`` under a new key (:func:`option_groups`): the model
config then reads ``model.<key>`` as strictly as its own sub-configs.

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

import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Literal, Optional

from ...errors import ConfigError
from ..config import ModelConfig

if TYPE_CHECKING:
    from ..transformer import Seq2Seq

__all__ = ["Variant", "Resources", "declared", "variant", "variant_table", "option_groups", "every_decoder_layer", "SPECS"]


def _nothing(cfg: ModelConfig) -> dict:
    return {}


def every_decoder_layer(cfg: ModelConfig) -> list[int]:
    """1-based numbers of every decoder layer (what a null layer list means)."""
    return list(range(1, cfg.dec_layers + 1))


@dataclass(frozen=True)
class Resources:
    """What a training job of the variant needs beyond the run's own settings."""

    #: GPUs a training job needs at least; the workflow asks for
    #: max(train.gpus, this). 0: the variant trains on a CPU (every variant today)
    gpus: int = 0


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
    #: the ``model:`` sub-configs it reads, key -> typed ``Config`` dataclass (defaults,
    #: bounds): one of ModelConfig's (``"gcn": GCNConfig``), or a new one declared in
    #: the variant's module, which ModelConfig then reads as ``model.<key>``
    #: (:func:`option_groups`)
    options: dict[str, type] = field(default_factory=dict)
    #: config values the variant fixes (an ablation's switches), nested like the config
    fixes: dict = field(default_factory=dict)
    #: the values it gives the keys whose null means "the variant's own"
    nulls: Callable[[ModelConfig], dict] = _nothing
    #: what those nulls mean, in words (the docs)
    nulls_mean: str = ""
    #: it induces latent source trees: its runs dump score matrices (synprep induce-eval)
    induces_trees: bool = False
    #: its decoder gates a syntactic context whose norms can be read (004 Eq. 17)
    gated: bool = False
    #: what a training job needs
    resources: Resources = field(default_factory=Resources)

    def model_class(self) -> type[Seq2Seq]:
        """The nn.Module class (imports torch and the model module); a RuntimeError
        when it decodes another target than the declaration says."""
        module, _, name = self.model.partition(":")
        cls = getattr(importlib.import_module(module), name)
        if cls.target != self.target:
            raise RuntimeError(f"variant {self.name!r}: {self.model} decodes {cls.target}, its declaration says {self.target}")
        return cls

    def resolve(self, cfg: ModelConfig, given: Optional[dict] = None) -> ModelConfig:
        """``cfg`` with the keys left null that mean "the variant's own" filled
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

    def unresolved(self, cfg: ModelConfig) -> list[str]:
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


def option_groups() -> dict[str, type]:
    """The sub-configs that variants declare beyond ModelConfig's fields: key -> Config
    class, in the order of :func:`declared` (ModelConfig reads and shows them after its
    fields). A key declared with two classes is an error."""
    fields = {f.name for f in dataclasses.fields(ModelConfig)}
    out: dict[str, type] = {}
    for v in declared().values():
        for key, kind in v.options.items():
            if key in fields:
                continue
            if out.setdefault(key, kind) is not kind:
                raise RuntimeError(f"model.{key} is declared as {out[key].__name__} and as {kind.__name__} ({v.name})")
    return out


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
