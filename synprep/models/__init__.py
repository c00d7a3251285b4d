"""The model variants the seeds compare, all trained from the same shards.

A variant is declared once, in :mod:`synprep.models.specs` (one module a family,
torch-free: its name, paper, the config values it fixes, what its nulls mean, its
settings, its resources and its model class); its model is an ``nn.Module`` in the
module of the same name here (``graph.py`` for the declarations of ``specs/graph.py``).
No list names them: :func:`variants` reads the declarations, and so do docs/models.md's
table (:func:`synprep.models.specs.variant_table`, checked by tests/test_models.py),
``synprep train --variant``, the workflow, the tests and bench/train.py;
docs/architecture.md says how to add one.

:func:`resolve` fills a config with its variant's values, once, at the edge (a
:class:`~synprep.train.config.RunConfig` read from a file or a checkpoint,
:func:`model_config`); :func:`build_model` makes the model of a resolved config. The
model config (:mod:`synprep.models.config`) holds the trunk and the variant's settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ..errors import ConfigError, out_of_memory
from ..settings import merge_dicts
from .config import PRESETS, ModelConfig
from .specs import Variant, baseline, declared, variant

# The model modules (and torch) are imported when a model is built
# (Variant.model_class), not here: the configs (synprep.models.config,
# synprep.train.config's RunConfig) are read without torch, e.g. by every job of the
# workflow when it reads the Snakefile.
if TYPE_CHECKING:
    from .transformer import Seq2Seq


def __getattr__(name: str):
    if name == "Seq2Seq":
        from .transformer import Seq2Seq  # lazy: imports torch, and this package is read torch-free

        return Seq2Seq
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["build_model", "check_resolved", "resolve", "variant", "variant_class", "variants", "baseline", "Variant",
           "ModelConfig", "model_config", "PRESETS", "Seq2Seq"]


def variant_class(name: str) -> type[Seq2Seq]:
    """The nn.Module class of variant ``name`` (imports torch)."""
    return variant(name).model_class()


def variants() -> list[str]:
    """The declared variants' names, sorted (torch-free)."""
    return sorted(declared())


def resolve(cfg: ModelConfig, given: Optional[dict] = None) -> ModelConfig:
    """``cfg`` resolved: the one place where a config gets the values its variant
    decides (:meth:`synprep.models.specs.Variant.resolve`, torch-free). (1) The keys
    left null that mean "the variant's own" (``sa.hard``, ``sa.dec_layers``,
    ``parent.layers``), so that ``--print-config``, config.json and checkpoints store the
    value the model uses; a config saved with nulls (older checkpoints) resolves to the
    same values on load. (2) The values the variant fixes (``gcn-nogates``:
    ``gcn.gates = gcn.labels = false``); a ConfigError when ``given`` (the model keys
    the user wrote) sets one of them to another value, or for an unknown variant.
    Called at the edge only: ``RunConfig.from_dict`` (a file, the command line, the
    workflow config, a checkpoint) and :func:`model_config`."""
    return variant(cfg.variant).resolve(cfg, given)


def model_config(preset: str | None = None, **overrides: Any) -> ModelConfig:
    """A resolved ModelConfig from a preset plus overrides (nested dicts for
    sub-configs): the library's edge, as ``RunConfig.from_dict`` is the commands'."""
    base: dict[str, Any] = {}
    if preset is not None:
        if preset not in PRESETS:
            raise ConfigError(f"unknown preset {preset!r}; known: {', '.join(sorted(PRESETS))}")
        base = dict(PRESETS[preset])
    return resolve(ModelConfig.from_dict(merge_dicts(base, overrides), "model"), overrides)


def check_resolved(cfg: ModelConfig) -> Variant:
    """The declaration of ``cfg``'s variant, when ``cfg`` is resolved (a ConfigError for
    an unknown variant or a config that is not: checked, never resolved again)."""
    spec = variant(cfg.variant)
    left = spec.unresolved(cfg)
    if left:
        raise ConfigError(f"model config of variant {cfg.variant!r} is not resolved ({', '.join(left)}): make it with "
                          "synprep.models.model_config or RunConfig.from_dict, or pass it through synprep.models.resolve")
    return spec


def build_model(cfg: ModelConfig) -> Seq2Seq:
    """The model of the resolved config ``cfg`` (resolved at the edge: a RunConfig, or
    :func:`model_config`; :func:`check_resolved`)."""
    cls = check_resolved(cfg).model_class()
    try:
        return cls(cfg)
    except Exception as e:
        if not out_of_memory(e):
            raise
        sizes = ", ".join(f"{k} = {getattr(cfg, k)}" for k in ("d_model", "d_ff", "enc_layers", "dec_layers", "max_len",
                                                                "src_vocab", "tgt_vocab"))
        raise ConfigError(f"model {cfg.variant!r} of {sizes} does not fit in this machine's memory; give smaller sizes "
                          "(model.d_model, model.d_ff, the layers, model.max_len) or use a larger machine") from None
